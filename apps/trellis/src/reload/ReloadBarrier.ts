/**
 * Holds calls to the plugins a reload is swapping. While a swap is in progress, a call to one of
 * its plugins waits until the swap ends (then it runs on the new generation) or until its wait
 * limit passes; calls to every other plugin go straight through.
 */
export interface ReloadBarrier {
  /** Whether calls to `pluginId` must wait now. */
  holds(pluginId: string): boolean;
  /** Starts a swap of these plugins. */
  raise(pluginIds: Iterable<string>): void;
  /** Ends the swap: every waiting call goes on. */
  lower(): void;
  /** Resolves `true` when the swap ends, `false` after `timeoutMs` or when `signal` aborts. */
  wait(timeoutMs: number, signal?: AbortSignal): Promise<boolean>;
  /** Calls waiting now. */
  waiting(): number;
  /** The plugins whose calls wait now (sorted; empty when no swap is in progress). */
  held(): readonly string[];
}

/** Creates a lowered {@link ReloadBarrier}. */
export function createReloadBarrier(): ReloadBarrier {
  let held: ReadonlySet<string> | undefined;
  const waiters = new Set<(passed: boolean) => void>();
  return {
    holds: (pluginId) => held?.has(pluginId) === true,
    raise(pluginIds) {
      held = new Set(pluginIds);
    },
    lower() {
      held = undefined;
      for (const wake of [...waiters]) wake(true);
    },
    wait(timeoutMs, signal) {
      if (held === undefined) return Promise.resolve(true);
      if (signal?.aborted === true) return Promise.resolve(false);
      return new Promise<boolean>((resolve) => {
        const done = (passed: boolean): void => {
          waiters.delete(done);
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          resolve(passed);
        };
        const onAbort = (): void => done(false);
        const timer = setTimeout(() => done(false), timeoutMs);
        signal?.addEventListener('abort', onAbort, { once: true });
        waiters.add(done);
      });
    },
    waiting: () => waiters.size,
    held: () => (held === undefined ? [] : [...held].sort()),
  };
}
