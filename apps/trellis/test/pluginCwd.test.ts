import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CommandIO } from '../src/io.ts';
import { main } from '../src/main.ts';

// [runtime] cwd of an external plugin: inside the plugin folder or the workspace, PATH_ESCAPE otherwise.
let dir: string;
let workspace: string;
let root: string;
let env: Record<string, string>;

beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'trellis-cwd-')));
  workspace = join(dir, 'workspace');
  root = join(dir, 'plugins');
  mkdirSync(join(workspace, 'sub'), { recursive: true });
  mkdirSync(join(dir, 'home'), { recursive: true });
  env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: join(dir, 'home'), XDG_CONFIG_HOME: join(dir, 'home', '.config') };
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function addPlugin(cwd: string | undefined): void {
  mkdirSync(join(root, 'where'), { recursive: true });
  writeFileSync(
    join(root, 'where', 'plugin.toml'),
    `schema_version = 1\nid = "where"\nname = "Where"\nversion = "0.1.0"\nkind = "toolset"\n\n[runtime]\ntype = "script"\ncommand = "sh"\nargs = ["pwd.sh"]\n${cwd === undefined ? '' : `cwd = ${JSON.stringify(cwd)}\n`}\n[[tools]]\nname = "pwd"\ndescription = "Prints its working folder."\ninput_schema = { type = "object" }\n`,
  );
  // The script is found relative to the plugin folder whatever the working folder is.
  writeFileSync(join(root, 'where', 'pwd.sh'), 'pwd -P\n');
}

async function run(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const io: CommandIO = { out: (t) => void (stdout += t), err: (t) => void (stderr += t), interactive: false };
  const code = await main(['--workspace', workspace, '--plugin-path', root, '--allow', 'where', ...args], io, env);
  return { code, stdout, stderr };
}

describe('[runtime] cwd', () => {
  it('defaults to the plugin folder', async () => {
    addPlugin(undefined);
    const result = await run(['tools', 'call', 'where.pwd']);
    expect(result.stderr).toBe('');
    expect(result.stdout.trim()).toBe(`{\n  "message": "${join(root, 'where')}"\n}`.trim());
  });

  it('runs in the workspace with ${WORKSPACE}, or a folder under it', async () => {
    addPlugin('${WORKSPACE}');
    const first = await run(['tools', 'call', 'where.pwd']);
    expect(first.stderr).toBe('');
    expect(first.stdout).toContain(`"message": "${workspace}"`);
    addPlugin('${WORKSPACE}/sub');
    expect((await run(['tools', 'call', 'where.pwd'])).stdout).toContain(`"message": "${join(workspace, 'sub')}"`);
  });

  it('rejects a cwd that climbs out at admission, with PATH_ESCAPE', async () => {
    addPlugin('../..');
    const explained = await run(['plugins', 'explain', 'where']);
    expect(explained.stdout).toContain('PATH_ESCAPE');
    expect(explained.stdout).toContain('runtime.cwd "../.."');
  });

  it('refuses a symlink that leads out of the workspace when the plugin starts, with PATH_ESCAPE', async () => {
    mkdirSync(join(dir, 'elsewhere'));
    symlinkSync(join(dir, 'elsewhere'), join(workspace, 'link'));
    addPlugin('${WORKSPACE}/link');
    const result = await run(['tools', 'call', 'where.pwd']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^PATH_ESCAPE: .*\[runtime\] cwd "\$\{WORKSPACE\}\/link" leaves the workspace/);
  });
});
