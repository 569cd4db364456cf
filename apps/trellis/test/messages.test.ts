import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CommandIO } from '../src/io.ts';
import { main } from '../src/main.ts';

// Messages that point the right way (issue 18, item 5): main() from source, no terminal.
let dir: string;
let workspace: string;
let env: Record<string, string>;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'trellis-messages-'));
  workspace = join(dir, 'workspace');
  mkdirSync(join(workspace, '.trellis'), { recursive: true });
  mkdirSync(join(dir, 'home', '.config', 'trellis'), { recursive: true });
  env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: join(dir, 'home'), XDG_CONFIG_HOME: join(dir, 'home', '.config') };
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function run(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const io: CommandIO = { out: (t) => void (stdout += t), err: (t) => void (stderr += t), interactive: false };
  const code = await main(['--workspace', workspace, ...args], io, env);
  return { code, stdout, stderr };
}

interface ListedPlugin {
  id: string;
  reasons: Array<{ code: string; message: string }>;
}

async function reasonOf(id: string, args: readonly string[]): Promise<string> {
  const listed = JSON.parse((await run(['plugins', 'list', '--json', ...args])).stdout) as { plugins: ListedPlugin[] };
  return listed.plugins
    .find((p) => p.id === id)!
    .reasons.map((r) => r.message)
    .join(' | ');
}

describe('messages that point the right way', () => {
  it('an opt-in plugin under --profile full says --allow / [plugins] allow, never "a larger profile"', async () => {
    const reason = await reasonOf('core-python', ['--profile', 'full']);
    expect(reason).toContain('add "core-python" to [plugins] allow in runtime.toml (or pass --allow core-python for one run)');
    expect(reason).not.toMatch(/larger profile|choose profile/);
  });

  it('a plugin of a larger profile names that profile', async () => {
    const reason = await reasonOf('telegram', []);
    expect(reason).toContain('or choose profile "messaging"');
  });

  it('an external opt-in plugin says the same', async () => {
    const root = join(dir, 'plugins');
    mkdirSync(join(root, 'hello'), { recursive: true });
    writeFileSync(
      join(root, 'hello', 'plugin.toml'),
      'schema_version = 1\nid = "hello"\nname = "Hello"\nversion = "0.1.0"\nkind = "toolset"\n',
    );
    const explained = await run(['plugins', 'explain', 'hello', '--plugin-path', root, '--profile', 'full']);
    expect(explained.stdout).toContain('--allow hello');
    expect(explained.stdout).not.toMatch(/larger profile/);
  });

  it('tools search finds a known-but-not-offered tool and says why', async () => {
    const result = await run(['tools', 'search', 'python']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/Known but not offered:\nNAME\s+WHY\ncore-python\.run\s+NOT_IN_PROFILE: .*--allow core-python/);
    const json = JSON.parse((await run(['tools', 'search', 'python', '--json'])).stdout) as {
      notOffered: Array<{ name: string; reason: { code: string } }>;
    };
    expect(json.notOffered).toEqual([
      { name: 'core-python.run', plugin: 'core-python', reason: { code: 'NOT_IN_PROFILE', message: expect.any(String) } },
    ]);
  });

  it('[runtime.policy] ask with no terminal says nobody could be asked and how to allow it', async () => {
    // The user's own config: a workspace's applies only once the workspace is trusted.
    writeFileSync(join(dir, 'home', '.config', 'trellis', 'runtime.toml'), '[runtime.policy]\nask = ["builtin-tools.now"]\n');
    const result = await run(['tools', 'call', 'builtin-tools.now']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('APPROVAL_DENIED');
    expect(result.stderr).toContain('nobody could be asked');
    expect(result.stderr).toContain('remove "builtin-tools.now" from [runtime.policy] ask');
    expect(result.stderr).not.toContain('the approver said no');
  });

  it('"[plugins" without "]" is an unclosed table header, with the file and line', async () => {
    const file = join(dir, 'home', '.config', 'trellis', 'runtime.toml');
    writeFileSync(file, '[plugins\nprofile = "full"\n');
    const result = await run(['plugins', 'list']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      new RegExp(`${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:1(:\\d+)?: the table header "\\[plugins" is not closed`),
    );
    expect(result.stderr).not.toContain('illegal character');
  });
});
