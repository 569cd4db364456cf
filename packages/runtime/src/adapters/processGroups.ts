import { existsSync } from 'node:fs';

const live = new Set<number>();
let hooked = false;

/** prlimit(1), used to cap a child's address space, when the machine has it. */
export const PRLIMIT_PATH: string | undefined = ['/usr/bin/prlimit', '/bin/prlimit'].find((p) => existsSync(p));

/** Sends `signal` to every process in the group led by `pgid`; a group that is gone is fine. */
export function killGroup(pgid: number | undefined, signal: NodeJS.Signals): void {
  if (pgid === undefined) return;
  try {
    process.kill(-pgid, signal);
  } catch {
    // The group is already gone.
  }
}

/**
 * SIGKILLs every plugin process group still alive, synchronously: the safety net for a host
 * that is leaving without `close()` (it runs from `process.on('exit')`, where nothing async can).
 * Returns how many groups were signalled.
 */
export function killTrackedGroups(): number {
  const count = live.size;
  for (const group of live) killGroup(group, 'SIGKILL');
  live.clear();
  return count;
}

/**
 * Remembers a plugin's process group so that, should the host exit without disposing it (an
 * uncaught error, `process.exit`, a signal handler that exits), the group is killed on the way
 * out instead of being orphaned. A signal the host does not handle ends Node without an `exit`
 * event: hosts trap SIGINT/SIGTERM/SIGHUP (the CLI does; docs/embedding.md shows how).
 */
export function trackGroup(pgid: number): void {
  live.add(pgid);
  if (!hooked) {
    hooked = true;
    process.once('exit', killTrackedGroups);
  }
}

/** Forgets a group whose leader has exited and whose members were killed. */
export function untrackGroup(pgid: number): void {
  live.delete(pgid);
}

/** Wraps a command in prlimit(1) with an address-space cap, when a cap is asked for and possible. */
export function withMemoryLimit(command: string, args: readonly string[], maxMemoryMb: number | undefined): { command: string; args: string[]; limited: boolean } {
  if (maxMemoryMb === undefined || PRLIMIT_PATH === undefined) return { command, args: [...args], limited: false };
  return { command: PRLIMIT_PATH, args: [`--as=${Math.floor(maxMemoryMb * 1024 * 1024)}`, '--', command, ...args], limited: true };
}
