import { spawnSync } from 'node:child_process';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLI, createSandbox, type Sandbox } from './cliHarness.ts';

// `--args -` through the real binary: the JSON comes from a pipe on standard input.
let sandbox: Sandbox;
beforeEach(() => {
  sandbox = createSandbox();
});
afterEach(() => sandbox.cleanup());

describe('tools call --args - (built binary)', () => {
  it('reads the input from a pipe', () => {
    const result = spawnSync(process.execPath, [CLI, 'tools', 'call', 'builtin-tools__echo', '--args', '-'], {
      cwd: sandbox.workspace,
      env: sandbox.env,
      input: '{"piped": [1, 2]}',
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ piped: [1, 2] });
  });

  it('says what to do when nothing was piped', () => {
    const result = spawnSync(process.execPath, [CLI, 'tools', 'call', 'builtin-tools.echo', '--args', '-', '--json'], {
      cwd: sandbox.workspace,
      env: sandbox.env,
      input: '',
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(result.status).toBe(2);
    expect(JSON.parse(result.stdout).error.message).toContain('--args - read nothing from standard input');
  });
});
