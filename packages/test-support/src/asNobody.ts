import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { bundleForAnotherUser } from './bundleForAnotherUser.ts';

/** The uid and gid tests use for "another user". */
export const NOBODY = 65534;

export interface AsNobodyOptions {
  readonly cwd: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Default 60 s: generous, so a loaded machine never turns a slow start into a failure. */
  readonly timeoutMs?: number;
}

/**
 * Runs `command args` as nobody (uid and gid 65534, no supplementary groups) through setpriv and
 * waits for it. Only root may switch users: callers skip this case when not root.
 */
export function spawnAsNobody(command: string, args: readonly string[], options: AsNobodyOptions): SpawnSyncReturns<string> {
  return spawnSync('setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', '--', command, ...args], {
    cwd: options.cwd,
    env: options.env ?? process.env,
    encoding: 'utf8',
    timeout: options.timeoutMs ?? 60_000,
  });
}

/**
 * Bundles a TypeScript probe (see `bundleForAnotherUser`) and runs it with this Node as nobody from
 * its temp folder, then removes the bundle. `args` follow the script on the command line.
 */
export function runProbeAsNobody(
  source: string,
  resolveDir: string,
  options: { readonly env?: NodeJS.ProcessEnv; readonly args?: readonly string[] } = {},
): SpawnSyncReturns<string> {
  const probe = bundleForAnotherUser(source, resolveDir);
  try {
    return spawnAsNobody(process.execPath, [probe.file, ...(options.args ?? [])], { cwd: probe.dir, env: options.env });
  } finally {
    probe.remove();
  }
}
