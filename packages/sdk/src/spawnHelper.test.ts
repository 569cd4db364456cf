import { afterEach, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { acquireSpawnHelper, prepareChildLauncher, spawnHelperReady, startChild } from './launchChild.ts';
import { childPidsMentioning } from '@trellis/test-support';
import { runProcess } from './runProcess.ts';
import { SPAWN_HELPER_NAME, SpawnHelper } from './spawnHelper.ts';
import type { StartedChild } from './spawnHelper.ts';

const ENV = { PATH: '/usr/bin:/bin' };
const releases: Array<() => void> = [];

afterEach(() => {
  for (const release of releases.splice(0)) release();
});

async function withHelper(onGone?: (reason: string) => void): Promise<() => void> {
  await prepareChildLauncher();
  const release = acquireSpawnHelper(onGone);
  releases.push(release);
  expect(await spawnHelperReady()).toBe(true);
  return release;
}

/** Everything a child said and how it ended, read the way the process adapter reads it. */
function collect(child: StartedChild): Promise<{ stdout: string; stderr: string; code: number | null; signal: string | null }> {
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  return new Promise((resolve) => {
    let status: { code: number | null; signal: string | null } = { code: null, signal: null };
    child.once('exit', (code, signal) => (status = { code, signal }));
    child.once('close', () => resolve({ stdout, stderr, ...status }));
  });
}

/**
 * What Trellis does after a child's leader is killed: end its whole group. A wrapper killed just as
 * it forks the namespace's pid 1 cannot pass its death on, and that orphan would hold the pipes open.
 */
const endGroup = (pid: number | undefined): void => {
  try {
    process.kill(-pid!, 'SIGKILL');
  } catch {
    // Already gone.
  }
};

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function waitFor(check: () => boolean, limitMs = 10_000): Promise<boolean> {
  const end = Date.now() + limitMs;
  while (Date.now() < end && !check()) await new Promise((r) => setTimeout(r, 20));
  return check();
}

describe('the spawn helper', () => {
  it('loses no output of a child that writes and exits at once, many times over', async () => {
    await withHelper();
    const runs = await Promise.all(
      Array.from({ length: 40 }, async (_, i) => {
        const { child } = await startChild({
          command: '/bin/sh',
          args: ['-c', `printf 'out-${i}\\n'; printf 'err-${i}\\n' >&2; exit ${i % 5}`],
          env: ENV,
          cwd: '/',
        });
        return { i, ...(await collect(child)) };
      }),
    );
    for (const run of runs) {
      expect(run.stdout).toBe(`out-${run.i}\n`);
      expect(run.stderr).toBe(`err-${run.i}\n`);
      expect(run.code).toBe(run.i % 5);
    }
  });

  it('forks the child from the helper: its parent is the helper, not this process', async () => {
    await withHelper();
    const { child } = await startChild({ command: '/bin/sleep', args: ['30'], env: ENV, cwd: '/' });
    const done = collect(child);
    const stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8');
    const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    expect(parent).not.toBe(process.pid);
    expect(readFileSync(`/proc/${parent}/cmdline`, 'utf8')).toContain(SPAWN_HELPER_NAME);
    child.kill('SIGKILL');
    endGroup(child.pid);
    await done;
  });

  it('carries a conversation both ways and an end of input', async () => {
    await withHelper();
    const { child, pgid } = await startChild({ command: '/bin/cat', env: ENV, cwd: '/' });
    expect(pgid).toBe(child.pid);
    const done = collect(child);
    child.stdin.write('one\n');
    child.stdin.end('two\n');
    expect(await done).toMatchObject({ stdout: 'one\ntwo\n', code: 0 });
  });

  it('kills a child on request and reports the signal', async () => {
    await withHelper();
    const { child } = await startChild({ command: '/bin/sleep', args: ['30'], env: ENV, cwd: '/' });
    const done = collect(child);
    expect(child.kill('SIGKILL')).toBe(true);
    endGroup(child.pid);
    expect(await done).toMatchObject({ code: null, signal: 'SIGKILL' });
    expect(child.kill('SIGKILL')).toBe(false);
  });

  it('rejects a program that is missing or not executable, naming it', async () => {
    await withHelper();
    const dir = mkdtempSync(join(tmpdir(), 'trellis-helper-'));
    try {
      const script = join(dir, 'not-executable.sh');
      writeFileSync(script, '#!/bin/sh\necho hi\n', { mode: 0o644 });
      await expect(startChild({ command: script, env: ENV, cwd: dir })).rejects.toMatchObject({ code: 'EACCES' });
      await expect(startChild({ command: 'no-such-program-trellis', env: ENV, cwd: dir })).rejects.toMatchObject({ code: 'ENOENT' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('falls back to spawning here when the helper dies, and its children do not outlive it', async () => {
    const reasons: string[] = [];
    await withHelper((reason) => reasons.push(reason));
    const { child } = await startChild({ command: '/bin/sleep', args: ['30'], env: ENV, cwd: '/' });
    const done = collect(child);
    const helpers = childPidsMentioning(process.pid, SPAWN_HELPER_NAME);
    expect(helpers.length).toBe(1);
    process.kill(helpers[0]!, 'SIGKILL');
    expect(await done).toMatchObject({ signal: 'SIGKILL' });
    expect(await waitFor(() => !isAlive(child.pid!))).toBe(true);
    expect(reasons.join('; ')).toMatch(/spawn helper was killed by SIGKILL; children are started by the host/);
    // Later children start from this process.
    const again = await startChild({ command: '/bin/sh', args: ['-c', 'echo $PPID'], env: ENV, cwd: '/' });
    expect(again.child.constructor.name).toBe('ChildProcess');
    expect((await collect(again.child)).code).toBe(0);
  });

  it('after its last user lets go, takes no new spawn, and stops once the children it ran are done', async () => {
    const release = await withHelper();
    // Started through the shared helper by code that never acquired it (an assemble() beside a live host).
    const { child } = await startChild({ command: '/bin/sleep', args: ['30'], env: ENV, cwd: '/' });
    const done = collect(child);
    const helpers = childPidsMentioning(process.pid, SPAWN_HELPER_NAME);
    expect(helpers).toHaveLength(1);
    release();
    expect(await spawnHelperReady()).toBe(false);
    // New children start here; the running one runs on, and the helper with it.
    const direct = await startChild({ command: '/bin/true', env: ENV, cwd: '/' });
    expect(direct.child.constructor.name).toBe('ChildProcess');
    await collect(direct.child);
    await new Promise((r) => setTimeout(r, 300));
    expect(isAlive(child.pid!)).toBe(true);
    expect(isAlive(helpers[0]!)).toBe(true);
    child.kill('SIGKILL');
    endGroup(child.pid);
    expect(await done).toMatchObject({ signal: 'SIGKILL' });
    expect(await waitFor(() => !isAlive(helpers[0]!))).toBe(true);
  });

  it('serves runProcess: output, exit status, deadline and a missing program, as a direct spawn would', async () => {
    await withHelper();
    const ran = await runProcess({
      command: '/bin/sh',
      args: ['-c', 'echo hi; echo oops >&2; exit 4'],
      env: ENV,
      timeoutMs: 20_000,
      maxOutputBytes: 1000,
    });
    expect(ran).toMatchObject({ stdout: 'hi\n', stderr: 'oops\n', exitCode: 4, timedOut: false });
    const slow = await runProcess({ command: '/bin/sleep', args: ['30'], env: ENV, timeoutMs: 300, maxOutputBytes: 1000 });
    expect(slow.timedOut).toBe(true);
    expect(slow.durationMs).toBeLessThan(20_000);
    const missing = await runProcess({ command: 'no-such-program-trellis', env: ENV, timeoutMs: 20_000, maxOutputBytes: 1000 });
    expect(missing.spawnError).toBe('ENOENT');
  });

  it('runs a command at most once when the helper is lost with spawns pending', async () => {
    await withHelper();
    const helper = childPidsMentioning(process.pid, SPAWN_HELPER_NAME)[0]!;
    const dir = mkdtempSync(join(tmpdir(), 'trellis-helper-'));
    try {
      const log = join(dir, 'ran.log');
      const starts = Array.from({ length: 20 }, (_, i) =>
        startChild({ command: '/bin/sh', args: ['-c', `echo ${i} >> ${log}`], env: ENV, cwd: dir }).then(
          ({ child }) => collect(child),
          (error: Error) => error,
        ),
      );
      // Let go as soon as the helper has run the first of them: the others are anywhere between
      // sent, started and reported.
      const lines = (): string[] => {
        try {
          return readFileSync(log, 'utf8').trim().split('\n').filter(Boolean);
        } catch {
          return [];
        }
      };
      await waitFor(() => lines().length > 0, 10_000);
      process.kill(helper, 'SIGKILL');
      const settled = await Promise.all(starts);
      await new Promise((r) => setTimeout(r, 300));
      const ran = lines();
      expect(ran.length).toBeGreaterThan(0);
      expect(new Set(ran).size).toBe(ran.length);
      // What was not started says so; nothing fell back to a second start here.
      for (const outcome of settled) {
        if (!(outcome instanceof Error)) continue;
        expect(outcome).toMatchObject({ code: 'SPAWN_HELPER_LOST' });
        expect(outcome.message).toMatch(/spawn helper was killed by SIGKILL before it reported the child/);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('starts 200 children at once through the helper, none falling back', async () => {
    await withHelper();
    const runs = await Promise.all(
      Array.from({ length: 200 }, async () => {
        const { child } = await startChild({ command: '/bin/sh', args: ['-c', 'echo ok'], env: ENV, cwd: '/' });
        return { direct: child.constructor.name === 'ChildProcess', ...(await collect(child)) };
      }),
    );
    expect(runs.filter((run) => run.direct)).toEqual([]);
    expect(runs.every((run) => run.stdout === 'ok\n' && run.code === 0)).toBe(true);
  });

  it('resolves a missing or relative working folder against this process, as a direct spawn does', async () => {
    await withHelper();
    const dir = mkdtempSync(join(tmpdir(), 'trellis-helper-'));
    const before = process.cwd();
    try {
      mkdirSync(join(dir, 'sub'));
      process.chdir(dir);
      const here = await collect((await startChild({ command: '/bin/pwd', env: ENV })).child);
      const sub = await collect((await startChild({ command: '/bin/pwd', env: ENV, cwd: 'sub' })).child);
      expect(here.stdout.trim()).toBe(dir);
      expect(sub.stdout.trim()).toBe(join(dir, 'sub'));
    } finally {
      process.chdir(before);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('gives a child that never reads its input no read error on stdin, and ends it with a close carrying its status', async () => {
    await withHelper();
    for (let i = 0; i < 10; i += 1) {
      const { child } = await startChild({ command: '/bin/sh', args: ['-c', 'sleep 0.02; exit 5'], env: ENV, cwd: '/' });
      const errors: Error[] = [];
      child.stdin.on('error', (error) => errors.push(error));
      child.stdin.write('a line nobody reads\n');
      // stdout and stderr are never read: 'close' must come all the same, with the status.
      const closed = await new Promise<unknown[]>((resolve) => child.once('close', (...args: unknown[]) => resolve(args)));
      expect(closed).toEqual([5, null]);
      expect(errors.map((e) => (e as NodeJS.ErrnoException).code)).not.toContain('ECONNRESET');
    }
  });
});

describe('a helper that stops answering', () => {
  const direct = async (helper: SpawnHelper): Promise<void> => {
    await prepareChildLauncher();
    expect(await helper.ready).toBe(true);
  };

  it('is given up on when a ping goes unanswered: its children are killed and reported, later spawns refused to the caller', async () => {
    const reasons: string[] = [];
    const helper = new SpawnHelper(spawn, [], (reason) => reasons.push(reason), { pingMs: 100, silenceLimitMs: 600 });
    try {
      await direct(helper);
      const child = await helper.spawn('/bin/sleep', ['30'], { cwd: '/', env: ENV });
      const done = collect(child);
      process.kill(helper.pid!, 'SIGSTOP');
      expect(await done).toMatchObject({ code: null, signal: 'SIGKILL' });
      expect(reasons.join('; ')).toMatch(/did not answer for 0.6 s/);
      expect(await waitFor(() => !isAlive(child.pid))).toBe(true);
      expect(helper.usable).toBe(false);
      await expect(helper.spawn('/bin/true', [], { cwd: '/', env: ENV })).rejects.toThrow(/not running/);
    } finally {
      helper.close();
    }
  });

  it('is kept when the host itself was too busy to read its answers', async () => {
    const reasons: string[] = [];
    const helper = new SpawnHelper(spawn, [], (reason) => reasons.push(reason), { pingMs: 100, silenceLimitMs: 1_000 });
    try {
      await direct(helper);
      const child = await helper.spawn('/bin/sleep', ['30'], { cwd: '/', env: ENV });
      const done = collect(child);
      // Stop the helper until a ping is surely out and unanswered, let it go on, and at once hold
      // this thread for well over the silence limit: the answer arrives meanwhile and waits,
      // unread, in the channel.
      process.kill(helper.pid!, 'SIGSTOP');
      await new Promise((r) => setTimeout(r, 300));
      process.kill(helper.pid!, 'SIGCONT');
      const until = Date.now() + 2_500;
      while (Date.now() < until) {
        // busy
      }
      await new Promise((r) => setTimeout(r, 500));
      expect(reasons).toEqual([]);
      expect(helper.usable).toBe(true);
      expect(isAlive(child.pid)).toBe(true);
      child.kill('SIGKILL');
      endGroup(child.pid);
      expect(await done).toMatchObject({ signal: 'SIGKILL' });
    } finally {
      helper.close();
    }
  });
});
