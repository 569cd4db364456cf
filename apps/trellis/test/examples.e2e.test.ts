import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSandbox, runCli, runCliAsync, type Sandbox } from './cliHarness.ts';

// Each shipped example, allowed the way its README says: `paths` names the examples folder and
// `allow` names the plugin, with and without a `[plugins.entries.<id>] config` table.
const examples = join(import.meta.dirname, '..', '..', '..', 'examples');
let sandbox: Sandbox;
let root: string;

beforeEach(() => {
  sandbox = createSandbox();
  root = join(sandbox.dir, 'examples');
  cpSync(examples, root, { recursive: true });
});
afterEach(() => sandbox.cleanup());

function writeConfig(id: string, entry = ''): string {
  const file = join(sandbox.home, 'runtime.toml');
  writeFileSync(file, `[plugins]\nallow = [${JSON.stringify(id)}]\npaths = [${JSON.stringify(root)}]\n${entry}`);
  return file;
}

function state(
  id: string,
  file: string,
  env: Record<string, string> = {},
): { code: number | null; state: string | undefined; stderr: string } {
  const listed = runCli(sandbox, ['plugins', 'list', '--json', '--config', file], env);
  const plugins = listed.code === 0 ? (JSON.parse(listed.stdout) as { plugins: Array<{ id: string; state: string }> }).plugins : [];
  return { code: listed.code, state: plugins.find((p) => p.id === id)?.state, stderr: listed.stderr };
}

describe('the shipped examples, allowed as their READMEs say', () => {
  it('word-count: listed, enabled and callable', () => {
    const file = writeConfig('word-count');
    expect(state('word-count', file)).toEqual({ code: 0, state: 'enabled', stderr: '' });
    const counted = runCli(sandbox, ['tools', 'call', 'word-count.count', '--args', '{"text":"a b c"}', '--json', '--config', file]);
    expect(counted.code).toBe(0);
    expect(JSON.parse(counted.stdout)).toEqual({ ok: true, value: { words: 3, lines: 1, characters: 5 } });
  });

  it('git-helper without a config table: every command still works and the plugin runs', () => {
    const file = writeConfig('git-helper');
    expect(state('git-helper', file)).toEqual({ code: 0, state: 'enabled', stderr: '' });
    const tools = runCli(sandbox, ['tools', 'list', '--json', '--config', file]);
    expect(tools.code).toBe(0);
    expect(tools.stderr).toBe('');
    const doctor = runCli(sandbox, ['doctor', '--config', file]);
    expect(doctor.stderr).not.toMatch(/internal error|not loaded/);
    // The default repository is the plugin folder: make it one, as a user running it there would have.
    execFileSync('git', ['init', '-q', join(root, 'git-helper')]);
    const status = runCli(sandbox, ['tools', 'call', 'git-helper.status', '--args', '{"short":true}', '--json', '--config', file]);
    expect(status.stderr).toBe('');
    expect(JSON.parse(status.stdout).ok).toBe(true);
  });

  it('git-helper with the README config table', () => {
    const repo = join(sandbox.dir, 'repo');
    execFileSync('git', ['init', '-q', repo]);
    writeFileSync(join(repo, 'a.txt'), 'x\n');
    const file = writeConfig('git-helper', `[plugins.entries.git-helper]\nconfig = { repo = ${JSON.stringify(repo)} }\n`);
    const status = runCli(sandbox, ['tools', 'call', 'git-helper.status', '--args', '{"short":true}', '--json', '--config', file]);
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ ok: true, value: { output: '?? a.txt\n' } });
  });

  describe('http-notes', () => {
    let server: ChildProcess | undefined;
    afterEach(() => {
      server?.kill('SIGKILL');
      server = undefined;
    });

    it('without NOTES_TOKEN: unavailable, and no command fails', () => {
      const file = writeConfig('http-notes');
      expect(state('http-notes', file)).toEqual({ code: 0, state: 'unavailable', stderr: '' });
      const tools = runCli(sandbox, ['tools', 'list', '--json', '--config', file]);
      expect(tools.code).toBe(0);
      expect(tools.stderr).toBe('');
    });

    it('with NOTES_TOKEN and the server running: enabled and callable', async () => {
      // The README's server on a free port (never a fixed one in tests); the private copy's manifest points at it.
      server = spawn(process.execPath, [join(root, 'http-notes', 'server.mjs')], {
        env: { ...sandbox.env, NOTES_TOKEN: 'secret', NOTES_PORT: '0' },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      const url = await new Promise<string>((resolve, reject) => {
        server!.stdout!.setEncoding('utf8').on('data', (d: string) => {
          const match = /http:\/\/127\.0\.0\.1:\d+/.exec(d);
          if (match) resolve(match[0]);
        });
        server!.on('exit', () => reject(new Error('the notes server exited')));
      });
      const manifest = join(root, 'http-notes', 'plugin.toml');
      writeFileSync(manifest, readFileSync(manifest, 'utf8').replace('http://127.0.0.1:8787', url));
      // As the README says: allow it, and grant it NOTES_TOKEN (no plugin gets a host variable unasked).
      const file = writeConfig('http-notes', '[plugins.entries.http-notes]\npass_env = ["NOTES_TOKEN"]\n');
      const env = { NOTES_TOKEN: 'secret' };
      expect(state('http-notes', file, env)).toEqual({ code: 0, state: 'enabled', stderr: '' });
      const added = await runCliAsync(
        sandbox,
        ['tools', 'call', 'http-notes.add', '--args', '{"title":"todo","text":"buy milk"}', '--json', '--config', file],
        env,
      );
      expect(added.stderr).toBe('');
      expect(JSON.parse(added.stdout).ok).toBe(true);
    });
  });
});
