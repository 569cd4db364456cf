import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CommandIO } from '../src/io.ts';
import { main } from '../src/main.ts';

// scaffold → test → call, for each external type and language, with real child processes and servers.
let dir: string;
let env: Record<string, string>;
const children: ChildProcess[] = [];

beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'trellis-scaffold-')));
  mkdirSync(join(dir, 'home'), { recursive: true });
  env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: join(dir, 'home'), XDG_CONFIG_HOME: join(dir, 'home', '.config') };
});
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

async function run(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const io: CommandIO = { out: (t) => void (stdout += t), err: (t) => void (stderr += t), interactive: false };
  const code = await main(['--workspace', dir, ...args], io, env);
  return { code, stdout, stderr };
}

/** Starts a scaffolded HTTP plugin on a free port and points its plugin.toml at it. */
async function serve(folder: string, command: string, file: string): Promise<void> {
  const child = spawn(command, [file], { cwd: folder, env: { ...env, PORT: '0' }, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  const port = await new Promise<string>((resolvePort, reject) => {
    let text = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      text += chunk;
      const match = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(text);
      if (match) resolvePort(match[1]!);
    });
    child.on('exit', (code) => reject(new Error(`the server exited with ${code}`)));
  });
  const manifest = join(folder, 'plugin.toml');
  writeFileSync(manifest, readFileSync(manifest, 'utf8').replace(/127\.0\.0\.1:8787/, `127.0.0.1:${port}`));
}

const CASES: ReadonlyArray<{ type: string; lang: string; file: string; command: string }> = [
  { type: 'script', lang: 'python', file: 'plugin.py', command: 'python3' },
  { type: 'script', lang: 'node', file: 'plugin.mjs', command: 'node' },
  { type: 'script', lang: 'sh', file: 'plugin.sh', command: 'sh' },
  { type: 'process', lang: 'python', file: 'plugin.py', command: 'python3' },
  { type: 'process', lang: 'node', file: 'plugin.mjs', command: 'node' },
  { type: 'http', lang: 'python', file: 'plugin.py', command: 'python3' },
  { type: 'http', lang: 'node', file: 'plugin.mjs', command: 'node' },
];

describe('trellis plugin new → plugin test → tools call', () => {
  for (const c of CASES) {
    it(`${c.type} in ${c.lang}`, async () => {
      const id = `hello-${c.type}-${c.lang}`;
      const created = await run(['plugin', 'new', id, '--external', c.type, '--lang', c.lang]);
      expect(created.stderr).toBe('');
      expect(created.code).toBe(0);
      const folder = join(dir, id);
      expect(created.stdout).toContain(`trellis plugin test ${folder}`);
      if (c.type === 'http') await serve(folder, c.command, c.file);

      const tested = await run(['plugin', 'test', folder]);
      expect(tested.stderr).toBe('');
      expect(tested.stdout).toContain(`ok   call ${id}.greet: {"name":"example"} → {"message":"Hello, example!"}`);
      expect(tested.stdout).toContain(`${id}: every check passed.`);
      expect(tested.code).toBe(0);

      const called = await run(['--plugin-path', dir, '--allow', id, 'tools', 'call', `${id}.greet`, '--args', '{"name":"Ada"}']);
      expect(called.stderr).toBe('');
      expect(JSON.parse(called.stdout)).toEqual({ message: 'Hello, Ada!' });
    }, 60_000);
  }
});

describe('trellis plugin test says what to fix', () => {
  it('a broken manifest: the file and key', async () => {
    await run(['plugin', 'new', 'broken', '--external', 'script', '--lang', 'sh']);
    const manifest = join(dir, 'broken', 'plugin.toml');
    writeFileSync(manifest, readFileSync(manifest, 'utf8').replace('kind = "toolset"', 'kind = "gadget"'));
    const tested = await run(['plugin', 'test', join(dir, 'broken')]);
    expect(tested.code).toBe(1);
    expect(tested.stdout).toMatch(/FAIL manifest: .*broken\/plugin\.toml: kind: must be one of/);
    expect(tested.stdout).toContain('broken: 1 problem; fix it and run');
  });

  it('a tool that fails: its text, and a process plugin that cannot start: the handshake', async () => {
    await run(['plugin', 'new', 'sad', '--external', 'script', '--lang', 'sh']);
    writeFileSync(join(dir, 'sad', 'plugin.sh'), 'echo "the database is gone" >&2\nexit 3\n');
    const failing = await run(['plugin', 'test', join(dir, 'sad')]);
    expect(failing.code).toBe(1);
    expect(failing.stdout).toMatch(/FAIL call sad\.greet: \{"name":"example"\} → TOOL_FAILED: .*the database is gone/);

    await run(['plugin', 'new', 'mute', '--external', 'process', '--lang', 'python']);
    writeFileSync(join(dir, 'mute', 'plugin.py'), 'import sys\nsys.exit(5)\n');
    const mute = await run(['plugin', 'test', join(dir, 'mute')]);
    expect(mute.code).toBe(1);
    expect(mute.stdout).toMatch(/FAIL handshake: /);
  }, 60_000);

  it('refuses a folder without plugin.toml and a bad id, with the fix', async () => {
    const none = await run(['plugin', 'test', dir]);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('plugin.toml does not exist');
    const bad = await run(['plugin', 'new', 'Bad_Id', '--external', 'script']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('must be 1–64 lowercase letters');
  });
});

describe('trellis plugin new <id> (bundled)', () => {
  it('writes the package under plugins/ and the app dependency line, and the build links it', async () => {
    const { linkBundledPlugins } = await import('../scripts/bundledIndex.ts');
    // Inside the app folder, so '@trellis/sdk' and 'zod' resolve as they do for real plugins.
    const base = join(import.meta.dirname, '..', '.tmp');
    mkdirSync(base, { recursive: true });
    const checkout = mkdtempSync(join(base, 'checkout-'));
    try {
      copyFileSync(join(import.meta.dirname, '..', '..', '..', 'tsconfig.base.json'), join(checkout, 'tsconfig.base.json'));
      writeFileSync(join(checkout, 'pnpm-workspace.yaml'), "packages:\n  - 'apps/*'\n  - 'plugins/*'\n");
      mkdirSync(join(checkout, 'apps', 'trellis'), { recursive: true });
      writeFileSync(
        join(checkout, 'apps', 'trellis', 'package.json'),
        '{\n  "name": "trellis",\n  "devDependencies": {\n    "@trellis/sdk": "workspace:*"\n  }\n}\n',
      );
      let stdout = '';
      const io: CommandIO = { out: (t) => void (stdout += t), err: (t) => void (stdout += t), interactive: false };
      expect(await main(['--workspace', join(checkout, 'apps'), 'plugin', 'new', 'hello-bundled'], io, env)).toBe(0);
      expect(stdout).toContain('--allow hello-bundled tools call hello-bundled.greet');
      const app = JSON.parse(readFileSync(join(checkout, 'apps', 'trellis', 'package.json'), 'utf8')) as {
        devDependencies: Record<string, string>;
      };
      expect(app.devDependencies).toEqual({ '@trellis/sdk': 'workspace:*', '@trellis/plugin-hello-bundled': 'workspace:*' });
      const linked = await linkBundledPlugins(checkout);
      expect(linked.errors).toEqual([]);
      expect(linked.plugins.map((p) => [p.manifest.id, p.tools.map((t) => t.name)])).toEqual([['hello-bundled', ['greet']]]);
    } finally {
      rmSync(checkout, { recursive: true, force: true });
    }
  });

  it('outside a checkout, says to run it in the repository or use --external', async () => {
    const outside = await run(['plugin', 'new', 'lonely']);
    expect(outside.code).toBe(2);
    expect(outside.stderr).toContain("is a package in a Trellis checkout's plugins/ folder");
  });
});
