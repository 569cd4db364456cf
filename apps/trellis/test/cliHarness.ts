import { spawn, spawnSync } from 'node:child_process';
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
