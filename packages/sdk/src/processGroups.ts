// The process groups of every child Trellis starts, directly or through the spawn helper: one
// list, so that a host leaving without stopping them (a crash, `process.exit`) kills them on the way
// out. Re-exported by launchChild.ts.

const live = new Set<number>();
let hooked = false;

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
 * Remembers a child's process group so that, should the host exit without stopping it (a crash,
 * `process.exit`), the group is killed on the way out instead of being orphaned.
 */
export function trackGroup(pgid: number): void {
  live.add(pgid);
  if (!hooked) {
    hooked = true;
    process.once('exit', killTrackedGroups);
  }
}

/**
 * SIGKILLs every tracked child process group still alive, synchronously: the safety net for a host
 * that is leaving without `close()` (it runs from `process.on('exit')`, where nothing async can).
 * Returns how many groups were signalled.
 */
export function killTrackedGroups(): number {
  const count = live.size;
  for (const group of live) killGroup(group, 'SIGKILL');
  live.clear();
  return count;
}

/** Forgets a group whose leader has exited. */
export function untrackGroup(pgid: number): void {
  live.delete(pgid);
}
