/**
 * Process-group helpers for the adapters. The one implementation lives with the launcher in
 * `@trellis/sdk` (`launchChild.ts`), so every child Trellis starts is tracked in one place.
 */
export { killGroup, killTrackedGroups, trackGroup, untrackGroup, PRLIMIT_PATH } from '@trellis/sdk/internal';

/**
 * Resolves once no process is left in the group led by `pgid` (or after `timeoutMs`). A SIGKILL is
 * delivered at once but a process takes a moment to die; an isolated child (pid 1 of its own
 * namespace) outlives its wrapper's exit by that moment. Stopping a plugin waits for this, so
 * "stopped" means no process of it is left.
 */
export async function waitForGroupGone(pgid: number | undefined, timeoutMs = 2000): Promise<void> {
  if (pgid === undefined) return;
  const until = performance.now() + timeoutMs;
  for (;;) {
    try {
      process.kill(-pgid, 0);
    } catch {
      return; // ESRCH: the group is empty
    }
    if (performance.now() >= until) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
