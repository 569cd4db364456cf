/**
 * The calls a live host is serving, as its reload's build sees them. A quick call (a plugin that
 * answers at once) is in flight for well under a millisecond of the host's time, and most of that
 * is waiting for the plugin's reply. If a slice of the build holds the event loop when the reply
 * arrives, the call waits for the slice; and a host thread that runs slices back to back looks
 * CPU-bound to the kernel's scheduler, which then lets other processes (the plugin that answers,
 * a child that boots) run first. So between slices the build waits while a *fresh* call, one that
 * started less than `freshMs` ago, is in flight: at most about one slice's time per slice
 * (`createPacer`'s `maxWaitMs`), so a host under constant load still reloads, at half speed at
 * worst. A call in flight for longer is slow anyway, and the build no longer waits for it.
 */
export interface FreshCalls {
  /** Marks a call started; the returned function marks it finished (a second call does nothing). */
  begin(): () => void;
  /**
   * `undefined` when no fresh call is in flight; else a promise that resolves when one of the calls
   * in flight finishes or the oldest fresh one stops being fresh (then ask again).
   */
  whileFresh(): Promise<void> | undefined;
  /** How many call records it holds in memory (in flight, or finished and not yet dropped). */
  held(): number;
}

/** Options of {@link trackFreshCalls}. */
export interface FreshCallsOptions {
  /** How long a call counts as fresh, in ms. Default 5. */
  readonly freshMs?: number;
  /** The clock, in ms (tests pass their own). Default `performance.now()`. */
  readonly now?: () => number;
}

interface Call {
  readonly startedAt: number;
  done: boolean;
}

export function trackFreshCalls(options: FreshCallsOptions = {}): FreshCalls {
  const freshMs = options.freshMs ?? 5;
  const now = options.now ?? (() => performance.now());
  // Calls in the order they started, so in the order they stop being fresh. Finished and stale
  // calls are dropped from the front as they reach it: the oldest entry left is then fresh and in
  // flight, or there is none.
  const calls: Call[] = [];
  let head = 0;
  let waiters: Array<() => void> = [];
  const dropStale = (): void => {
    const freshSince = now() - freshMs;
    while (head < calls.length && (calls[head]!.done || calls[head]!.startedAt <= freshSince)) head += 1;
    if (head >= 1024 && head * 2 >= calls.length) {
      calls.splice(0, head);
      head = 0;
    }
  };
  const wake = (): void => {
    const woken = waiters;
    waiters = [];
    for (const resolve of woken) resolve();
  };
  return {
    begin() {
      dropStale();
      const call: Call = { startedAt: now(), done: false };
      calls.push(call);
      return () => {
        if (call.done) return;
        call.done = true;
        if (waiters.length > 0) wake();
      };
    },
    whileFresh() {
      dropStale();
      const oldest = calls[head];
      if (oldest === undefined) return undefined;
      return new Promise<void>((resolve) => {
        const timer = setTimeout(
          () => {
            waiters = waiters.filter((waiter) => waiter !== settle);
            resolve();
          },
          Math.max(0, oldest.startedAt + freshMs - now()),
        );
        const settle = (): void => {
          clearTimeout(timer);
          resolve();
        };
        waiters.push(settle);
      });
    },
    held: () => calls.length,
  };
}
