import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { runProcess } from './runProcess.ts';
import { isPathInside } from './paths.ts';

const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };

function processesWithMarker(marker: string): string[] {
  const out = execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' });
  return out.split('\n').filter((line) => line.includes(marker) && !line.includes('ps -eo'));
}

describe('runProcess', () => {
  it('passes arguments literally, with no shell', async () => {
    const result = await runProcess({
      command: 'printf',
      args: ['%s|', '$(id)', '; rm -rf /', '`x`'],
      env,
      timeoutMs: 5000,
      maxOutputBytes: 1000,
    });
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe('$(id)|; rm -rf /|`x`|');
  });

  it('feeds stdin and keeps stdout and stderr apart', async () => {
    const result = await runProcess({
      command: 'sh',
      args: ['-c', 'cat; echo oops >&2; exit 3'],
      stdin: 'hello',
      env,
      timeoutMs: 5000,
      maxOutputBytes: 1000,
    });
    expect(result).toMatchObject({ exitCode: 3, stdout: 'hello', stderr: 'oops\n', timedOut: false });
  });

  it('caps output and says so', async () => {
    const result = await runProcess({ command: 'sh', args: ['-c', 'head -c 100000 /dev/zero'], env, timeoutMs: 5000, maxOutputBytes: 10 });
    expect(result.stdout.length).toBe(10);
    expect(result.stdoutTruncated).toBe(true);
    expect(result.exitCode).toBe(0);
  });

  it('kills the whole group at the deadline, grandchildren included', async () => {
    const marker = `trellis-sleep-marker-${process.pid}`;
    const result = await runProcess({
      command: 'sh',
      args: ['-c', `sh -c "sleep 30; echo ${marker}" & sleep 30; echo ${marker}`],
      env,
      timeoutMs: 300,
      maxOutputBytes: 1000,
    });
    expect(result.timedOut).toBe(true);
    expect(result.exitCode).toBe(null);
    await new Promise((r) => setTimeout(r, 100));
    expect(processesWithMarker(marker)).toEqual([]);
  });

  it('reports a missing program instead of throwing', async () => {
    const result = await runProcess({ command: 'definitely-not-a-program-xyz', env, timeoutMs: 1000, maxOutputBytes: 10 });
    expect(result.spawnError).toBe('ENOENT');
    expect(result.exitCode).toBe(null);
  });

  it('stops at once when aborted', async () => {
    const controller = new AbortController();
    const pending = runProcess({ command: 'sleep', args: ['30'], env, timeoutMs: 30_000, maxOutputBytes: 10, signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    const result = await pending;
    expect(result.aborted).toBe(true);
    // pid 1 of a namespace ignores a SIGTERM it has no handler for, so an isolated child gets SIGKILL.
    expect(result.signal).toBe(result.isolated ? 'SIGKILL' : 'SIGTERM');
  });
});

describe('isPathInside', () => {
  it('compares component-wise', () => {
    expect(isPathInside('/r/a', '/r/a')).toBe(true);
    expect(isPathInside('/r/a', '/r/a/b/c')).toBe(true);
    expect(isPathInside('/r/a', '/r/ab')).toBe(false);
    expect(isPathInside('/r/a', '/r')).toBe(false);
    expect(isPathInside('/r/a', '/r/a/..foo')).toBe(true);
    expect(isPathInside('/r/a', '/r/a/../b')).toBe(false);
    expect(isPathInside('/', '/anything')).toBe(true);
  });
});
