import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSandbox, runCli, type Sandbox } from './cliHarness.ts';

const examples = join(import.meta.dirname, '..', '..', '..', 'examples');
let sandbox: Sandbox;
let root: string;

beforeEach(() => {
  sandbox = createSandbox();
  // A private copy of the examples as an explicit plugin root (root 0), owned by us, mode 755.
  root = join(sandbox.dir, 'plugins');
  cpSync(examples, root, { recursive: true });
});
afterEach(() => sandbox.cleanup());

function config(text: string): string {
  const file = join(sandbox.workspace, 'runtime.toml');
  writeFileSync(file, text);
  return file;
}

function pluginRows(stdout: string): Record<string, string> {
  const json = JSON.parse(stdout) as {
    plugins: Array<{ id: string; state: string; source: { root: string }; reasons: Array<{ code: string }> }>;
  };
  return Object.fromEntries(
    json.plugins.filter((p) => p.source.root !== 'bundled').map((p) => [p.id, `${p.source.root}:${p.state}:${p.reasons[0]?.code ?? ''}`]),
  );
}

function processesWith(marker: string): string[] {
  return execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.includes(marker) && !line.startsWith('ps '));
}

describe('external plugins through the CLI', () => {
  it('are found, stay off until allowed, and then run out of process', () => {
    const listed = runCli(sandbox, ['plugins', 'list', '--json', '--plugin-path', root]);
    expect(listed.code).toBe(0);
    expect(pluginRows(listed.stdout)).toEqual({
      'conformance-tools': 'explicit:disabled:NOT_IN_PROFILE',
      'git-helper': 'explicit:disabled:NOT_IN_PROFILE',
      'http-notes': 'explicit:rejected:SIDE_EFFECTS_NOT_ALLOWED',
      'word-count': 'explicit:disabled:NOT_IN_PROFILE',
    });

    const file = config('[plugins]\nallow = ["word-count"]\n');
    const allowed = runCli(sandbox, ['plugins', 'list', '--json', '--plugin-path', root, '--config', file]);
    expect(pluginRows(allowed.stdout)['word-count']).toBe('explicit:enabled:ALLOWED');

    const counted = runCli(sandbox, [
      'tools',
      'call',
      'word-count.count',
      '--args',
      '{"text":"one two\\nthree"}',
      '--json',
      '--plugin-path',
      root,
      '--config',
      file,
    ]);
    expect(counted).toEqual({
      code: 0,
      stdout: `${JSON.stringify({ ok: true, value: { words: 3, lines: 2, characters: 13 } }, null, 2)}\n`,
      stderr: '',
    });
    const invalid = runCli(sandbox, [
      'tools',
      'call',
      'word-count.count',
      '--args',
      '{"txt":"x"}',
      '--json',
      '--plugin-path',
      root,
      '--config',
      file,
    ]);
    expect(invalid.code).toBe(1);
    expect(JSON.parse(invalid.stdout).error.code).toBe('INPUT_INVALID');
  });

  it('a persistent process plugin answers, and leaves no process behind when the CLI exits', () => {
    const repo = join(sandbox.dir, 'repo');
    mkdirSync(repo);
    execFileSync('git', ['init', '-q', '-b', 'main', repo]);
    writeFileSync(join(repo, 'a.txt'), 'hello\n');
    const file = config(`[plugins]\nallow = ["git-helper"]\n[plugins.entries.git-helper]\nconfig = { repo = ${JSON.stringify(repo)} }\n`);
    const status = runCli(sandbox, [
      'tools',
      'call',
      'git-helper.status',
      '--args',
      '{"short":true}',
      '--json',
      '--plugin-path',
      root,
      '--config',
      file,
    ]);
    expect(status.stderr).toBe('');
    expect(status.code).toBe(0);
    const value = JSON.parse(status.stdout).value as { branch: string; output: string };
    expect(value.branch).toBe('main');
    expect(value.output).toContain('?? a.txt');
    expect(processesWith(join(root, 'git-helper'))).toEqual([]);
    expect(processesWith('git_helper.py')).toEqual([]);
  });

  it('an unsafe plugin folder is rejected with a reason, and the host keeps serving', () => {
    const bad = join(root, 'word-count');
    chmodSync(bad, 0o777);
    const outside = join(sandbox.dir, 'outside');
    mkdirSync(outside);
    writeFileSync(join(outside, 'plugin.toml'), 'schema_version = 1\nid = "escapee"\nname = "x"\nversion = "1.0.0"\nkind = "toolset"\n');
    symlinkSync(join(outside, 'plugin.toml'), join(root, 'git-helper', 'plugin.toml.link'));
    mkdirSync(join(root, 'escapee'));
    symlinkSync(join(outside, 'plugin.toml'), join(root, 'escapee', 'plugin.toml'));
    const file = config('[plugins]\nallow = ["word-count", "escapee"]\n');
    const listed = runCli(sandbox, ['plugins', 'list', '--json', '--plugin-path', root, '--config', file]);
    expect(listed.code).toBe(0);
    const rows = pluginRows(listed.stdout);
    expect(rows['word-count']).toBe('explicit:rejected:WORLD_WRITABLE');
    expect(rows.escapee).toBe('explicit:rejected:PATH_ESCAPE');
    const echo = runCli(sandbox, [
      'tools',
      'call',
      'builtin-tools.echo',
      '--args',
      '{"still":"serving"}',
      '--json',
      '--plugin-path',
      root,
      '--config',
      file,
    ]);
    expect(echo.code).toBe(0);
    const explained = runCli(sandbox, ['plugins', 'explain', 'word-count', '--plugin-path', root, '--config', file]);
    expect(explained.stdout).toContain('WORLD_WRITABLE');
  });
});
