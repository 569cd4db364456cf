import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';

/** The built binary: end-to-end tests run exactly what users run. */
export const CLI = join(import.meta.dirname, '..', 'dist', 'cli.cjs');

/**
 * A copy of the built binary that another user can run (setpriv) even when the checkout sits in a
 * folder only its owner may enter (a clone in a mode-700 home). The build is self-contained, so
 * `dist/` alone is enough; source maps are left out. `remove()` deletes the copy.
 */
export function copyCliForAnotherUser(): { cli: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-cli-as-user-'));
  chmodSync(dir, 0o755);
  const dist = join(dir, 'dist');
  cpSync(dirname(CLI), dist, { recursive: true, filter: (source) => !source.endsWith('.map') });
  return { cli: join(dist, basename(CLI)), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A throwaway home and workspace, so the user's real config never leaks into a test. */
export interface Sandbox {
  readonly dir: string;
  readonly home: string;
  readonly workspace: string;
  readonly env: Record<string, string>;
  cleanup(): void;
}

export function createSandbox(extraEnv: Record<string, string> = {}): Sandbox {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-e2e-'));
  const home = join(dir, 'home');
  const workspace = join(dir, 'workspace');
  mkdirSync(home, { recursive: true });
  mkdirSync(workspace, { recursive: true });
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    LANG: 'C.UTF-8',
    ...extraEnv,
  };
  return { dir, home, workspace, env, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface RunResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the built `trellis` with no stdin (never a TTY), in the sandbox's workspace. */
export function runCli(sandbox: Sandbox, args: readonly string[], extraEnv: Record<string, string> = {}): RunResult {
  const result = spawnSync(process.execPath, [CLI, ...args], {
    cwd: sandbox.workspace,
    env: { ...sandbox.env, ...extraEnv },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 60_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Like `runCli`, but without blocking this process's event loop (for tests that serve HTTP themselves). */
export function runCliAsync(sandbox: Sandbox, args: readonly string[], extraEnv: Record<string, string> = {}): Promise<RunResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: sandbox.workspace,
      env: { ...sandbox.env, ...extraEnv },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolvePromise({ code, stdout, stderr });
    });
  });
}

/** `trellis trust` in the sandbox's workspace: its `.trellis` config, plugins and skills then apply. */
export function trustWorkspace(sandbox: Sandbox): void {
  const result = runCli(sandbox, ['trust']);
  if (result.code !== 0) throw new Error(`trellis trust failed (${result.code}): ${result.stderr}`);
}

/** One JSON log line of a long-running command (`trellis run` logs JSON lines on stderr). */
export type LogLine = Record<string, unknown>;

/** A long-running `trellis` command started by {@link startLongRunning}. */
export interface LongRunning {
  readonly child: ChildProcess;
  /** Every stderr line so far, parsed; throws on a line that is not JSON (run's log is JSON only). */
  logs(): LogLine[];
  /** Resolves with the first log line (from index `from` on) that matches; rejects if the command exits or 40 s pass. */
  waitForLog(what: string, match: (line: LogLine) => boolean, from?: number): Promise<LogLine>;
  stdout(): string;
  stderr(): string;
  readonly exited: Promise<number | null>;
}

/**
 * Starts `trellis <args>` without blocking this process (which may serve the fake APIs the command
 * talks to), in the sandbox's workspace with its environment plus `extraEnv`.
 */
export function startLongRunning(sandbox: Sandbox, args: readonly string[], extraEnv: Record<string, string> = {}): LongRunning {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: sandbox.workspace,
    env: { ...sandbox.env, ...extraEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let stdout = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const logs = (): LogLine[] =>
    stderr
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => {
        try {
          return JSON.parse(l) as LogLine;
        } catch {
          throw new Error(`trellis ${args[0]} wrote a line that is not JSON on stderr: ${l}`);
        }
      });
  const waitForLog = async (what: string, match: (line: LogLine) => boolean, from = 0): Promise<LogLine> => {
    const deadline = Date.now() + 40_000;
    for (;;) {
      const found = logs().slice(from).find(match);
      if (found !== undefined) return found;
      if (child.exitCode !== null) throw new Error(`trellis ${args[0]} exited ${child.exitCode} before ${what}:\n${stderr}${stdout}`);
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; stderr so far:\n${stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  return { child, logs, waitForLog, stdout: () => stdout, stderr: () => stderr, exited };
}
