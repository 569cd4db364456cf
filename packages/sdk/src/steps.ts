/**
 * A piece of synchronous work that says where it may pause: a generator that yields after each
 * unit of work (a folder walked, a manifest admitted, a plugin's tools described) and returns its
 * result. {@link runSteps} runs it in one go (the CLI, `assemble()`); {@link runStepsPausing} asks
 * a {@link Pause} at every yield, so a long-running host that rebuilds keeps serving meanwhile.
 */
export type Steps<T> = Generator<void, T, void>;

/**
 * Asked at every point where work may pause: `undefined` to go on at once, or a promise to await
 * first (one that lets the event loop turn). See {@link createPacer}.
 */
export type Pause = () => Promise<void> | undefined;

/** Runs `steps` to the end without pausing and returns its result. */
export function runSteps<T>(steps: Steps<T>): T {
  for (;;) {
    const step = steps.next();
    if (step.done === true) return step.value;
  }
}

/** Runs `steps`, asking `pause()` at each point where it may pause and awaiting what it returns. */
export async function runStepsPausing<T>(steps: Steps<T>, pause: Pause): Promise<T> {
  for (;;) {
    const step = steps.next();
    if (step.done === true) return step.value;
    const waiting = pause();
    if (waiting !== undefined) await waiting;
  }
}

/** Options of {@link createPacer}. */
export interface PacerOptions {
  /** The clock, in ms (tests pass their own). Default `performance.now()`. */
  readonly now?: () => number;
  /**
   * Asked after each turn of the event loop between slices: a promise to wait for before the next
   * slice begins (a call being served that the work should not get in the way of, see
   * `trackFreshCalls` in `trellis`), or `undefined` to begin it at once. Asked again after each
   * wait, until about `maxWaitMs` have passed, so the work always goes on.
   */
  readonly waitBeforeSlice?: () => Promise<void> | undefined;
  /**
   * About the most a slice waits for `waitBeforeSlice`, in ms (timers fire on whole milliseconds).
   * Default `sliceMs`: work that is waited for at every slice still gets half the time.
   */
  readonly maxWaitMs?: number;
}

/**
 * A {@link Pause} that holds the event loop for at most about `sliceMs` at a time: it lets work go
 * on until `sliceMs` have passed since the last turn, then returns a promise that resolves after
 * one turn of the event loop (`setImmediate`: the I/O and timers that came due, such as replies to
 * calls being served, run first) and after what `waitBeforeSlice` asks it to wait for. Yielding
 * after every unit costs a clock read, not a turn.
 */
export function createPacer(sliceMs: number, options: PacerOptions = {}): Pause {
  const now = options.now ?? (() => performance.now());
  const { waitBeforeSlice } = options;
  const maxWaitMs = options.maxWaitMs ?? sliceMs;
  let sliceStart = now();
  const turn = (): Promise<void> => new Promise<void>((resolve) => setImmediate(resolve));
  const nextSlice = async (): Promise<void> => {
    await turn();
    if (waitBeforeSlice !== undefined) {
      const waitUntil = now() + maxWaitMs;
      for (let left = maxWaitMs; left > 0; left = waitUntil - now()) {
        const waiting = waitBeforeSlice();
        if (waiting === undefined) break;
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([waiting, new Promise<void>((resolve) => (timer = setTimeout(resolve, left)))]);
        clearTimeout(timer);
        // What ended the wait (a reply) runs its continuations first.
        await turn();
      }
    }
    sliceStart = now();
  };
  return () => {
    if (now() - sliceStart < sliceMs) return undefined;
    return nextSlice();
  };
}
