import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { assemble } from '../src/assemble.ts';
import type { CommandIO } from '../src/io.ts';
import { main } from '../src/main.ts';

// main() from source with buffered IO: the habits of the command line, one test per behaviour.
let dir: string;
let workspace: string;
let env: Record<string, string>;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'trellis-habits-'));
  workspace = join(dir, 'workspace');
  mkdirSync(join(dir, 'home'), { recursive: true });
  mkdirSync(workspace, { recursive: true });
  env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: join(dir, 'home'), XDG_CONFIG_HOME: join(dir, 'home', '.config') };
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** The user's own config file (a workspace's applies only once the workspace is trusted). */
function writeConfig(text: string): void {
  mkdirSync(join(dir, 'home', '.config', 'trellis'), { recursive: true });
  writeFileSync(join(dir, 'home', '.config', 'trellis', 'runtime.toml'), text);
}

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

async function run(args: readonly string[], options: { stdin?: string } = {}): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const io: CommandIO = {
    out: (t) => void (stdout += t),
    err: (t) => void (stderr += t),
    interactive: false,
    ...(options.stdin !== undefined ? { readStdin: async () => options.stdin! } : {}),
  };
  const code = await main(['--workspace', workspace, ...args], io, env);
  return { code, stdout, stderr };
}

describe('--allow, --enable, --disable for one run', () => {
  it('--allow enables an opt-in plugin, and explain says it came from the command line', async () => {
    const before = await run(['plugins', 'explain', 'core-python', '--profile', 'full']);
    expect(before.stdout).toContain('NOT_IN_PROFILE');
    const after = await run(['plugins', 'list', '--json', '--profile', 'full', '--allow', 'core-python']);
    const entry = (JSON.parse(after.stdout) as { plugins: Array<{ id: string; state: string }> }).plugins.find(
      (p) => p.id === 'core-python',
    );
    expect(entry?.state).toBe('enabled');
    const explained = await run(['plugins', 'explain', 'core-python', '--allow', 'core-python']);
    expect(explained.code).toBe(0);
    expect(explained.stdout).toContain('enabled because --allow core-python on the command line');
  });

  it('--disable turns a profile plugin off and --enable turns one on, over runtime.toml', async () => {
    writeConfig('[plugins]\nprofile = "minimal"\n[plugins.entries.core-table]\nenabled = false\n');
    const listed = await run(['tools', 'list', '--json', '--disable', 'core-fs', '--enable', 'core-table']);
    expect(listed.code).toBe(0);
    const names = (JSON.parse(listed.stdout) as { tools: Array<{ name: string }> }).tools.map((t) => t.name);
    expect(names.some((n) => n.startsWith('core-fs.'))).toBe(false);
    expect(names.some((n) => n.startsWith('core-table.'))).toBe(true);
    const explained = await run(['plugins', 'explain', 'core-fs', '--disable', 'core-fs']);
    expect(explained.stdout).toContain('disabled by --disable core-fs on the command line');
  });

  it('refuses a malformed id and a plugin both enabled and disabled, with exit 2', async () => {
    const bad = await run(['plugins', 'list', '--allow', 'Core Python']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--allow takes a plugin id');
    const both = await run(['plugins', 'list', '--enable', 'core-fs', '--disable', 'core-fs']);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--enable core-fs and --disable core-fs contradict each other');
  });
});

describe('tools call --args @file and --args -', () => {
  it('reads the input from a file', async () => {
    writeFileSync(join(workspace, 'note.txt'), 'hello from a file\n');
    const argsFile = join(dir, 'input.json');
    writeFileSync(argsFile, JSON.stringify({ path: 'note.txt' }));
    const result = await run(['tools', 'call', 'core-fs.read', '--args', `@${argsFile}`, '--json']);
    expect(result.code).toBe(0);
    expect(JSON.stringify(JSON.parse(result.stdout))).toContain('hello from a file');
  });

  it('reads the input from standard input', async () => {
    writeFileSync(join(workspace, 'note.txt'), 'hello from stdin\n');
    const result = await run(['tools', 'call', 'core-fs.read', '--args', '-', '--json'], { stdin: '{"path":"note.txt"}' });
    expect(result.code).toBe(0);
    expect(JSON.stringify(JSON.parse(result.stdout))).toContain('hello from stdin');
  });

  it('names the missing file and the bad JSON', async () => {
    const missing = await run(['tools', 'call', 'builtin-tools.now', '--args', '@nope.json']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--args @nope.json: cannot read');
    expect(missing.stderr).toContain('(no such file)');
    const argsFile = join(dir, 'broken.json');
    writeFileSync(argsFile, '{"path":');
    const broken = await run(['tools', 'call', 'builtin-tools.now', '--args', `@${argsFile}`]);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toContain(`--args: ${argsFile} must hold JSON`);
  });
});

describe('tools list --all and tools describe by model-API name', () => {
  it('names each tool known but not offered, with its reason', async () => {
    const plain = await run(['tools', 'list']);
    expect(plain.stdout).toMatch(/known but not offered: core-python\.\w+.*\(`trellis tools list --all` says why\)\n$/);
    const all = await run(['tools', 'list', '--all']);
    expect(all.stdout).toContain('Known but not offered:');
    expect(all.stdout).toMatch(
      /core-python\.\w+\s+NOT_IN_PROFILE: core-python.run is not offered: plugin core-python is disabled \(not in profile "minimal"/,
    );
    const json = JSON.parse((await run(['tools', 'list', '--all', '--json'])).stdout) as {
      notOffered: Array<{ name: string; reason: { code: string } }>;
    };
    expect(json.notOffered.find((t) => t.name.startsWith('core-python.'))?.reason.code).toBe('NOT_IN_PROFILE');
  });

  it('describes a tool by its model-API name', async () => {
    const result = await run(['tools', 'describe', 'builtin-tools__now', '--json']);
    expect(result.code).toBe(0);
    expect((JSON.parse(result.stdout) as { name: string }).name).toBe('builtin-tools.now');
  });
});

describe('--json errors', () => {
  it('prints a usage error as a JSON object on stdout with exit 2', async () => {
    const result = await run(['tools', 'frobnicate', '--json']);
    expect(result.code).toBe(2);
    expect(JSON.parse(result.stdout)).toEqual({
      error: { code: 'USAGE', message: expect.stringContaining('unknown subcommand "frobnicate"'), exit: 2 },
    });
  });

  it('prints a broken config as CONFIG_INVALID with every problem, exit 2', async () => {
    writeConfig('[plugins]\nprofile = 3\n');
    const result = await run(['tools', 'list', '--json']);
    expect(result.code).toBe(2);
    const parsed = JSON.parse(result.stdout) as { error: { code: string; exit: number; problems: Array<{ message: string }> } };
    expect(parsed.error.code).toBe('CONFIG_INVALID');
    expect(parsed.error.exit).toBe(2);
    expect(parsed.error.problems[0]?.message).toContain('profile');
  });

  it('prints an unknown tool as TOOL_NOT_FOUND with exit 1', async () => {
    const result = await run(['tools', 'describe', 'nope.nothing', '--json']);
    expect(result.code).toBe(1);
    expect((JSON.parse(result.stdout) as { error: { code: string; exit: number } }).error).toMatchObject({
      code: 'TOOL_NOT_FOUND',
      exit: 1,
    });
  });
});

describe('renderings', () => {
  it('tools list --format prints exactly what render() returns', async () => {
    const assembly = await assemble({ workspace, env });
    try {
      for (const format of ['openai', 'anthropic', 'mcp'] as const) {
        const printed = await run(['tools', 'list', '--format', format]);
        expect(printed.code).toBe(0);
        expect(JSON.parse(printed.stdout)).toEqual(assembly.catalog.render(format));
        expect(Array.isArray(JSON.parse(printed.stdout))).toBe(true);
      }
    } finally {
      await assembly.dispose();
    }
  });
});

describe('core-command.run', () => {
  it('runs a program with no "args" at all', async () => {
    writeConfig('[runtime.tools.command]\nallow = ["pwd"]\n');
    const result = await run(['tools', 'call', 'core-command.run', '--args', '{"program":"pwd"}', '--json']);
    expect(result.stdout).not.toContain('"ok": false');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(JSON.stringify(JSON.parse(result.stdout))).toContain(workspace);
  });
});
