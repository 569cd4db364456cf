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

/**
 * A {@link Pause} that holds the event loop for at most about `sliceMs` at a time: it lets work go
 * on until `sliceMs` have passed since the last turn, then returns a promise that resolves after
 * one turn of the event loop (`setImmediate`: the I/O and timers that came due, such as replies to
 * calls being served, run first). Yielding after every unit costs a clock read, not a turn.
 * `now` is the clock (tests pass their own).
 */
export function createPacer(sliceMs: number, now: () => number = () => performance.now()): Pause {
  let sliceStart = now();
  const resume = (resolve: () => void): void => {
    sliceStart = now();
    resolve();
  };
  return () => {
    if (now() - sliceStart < sliceMs) return undefined;
    return new Promise<void>((resolve) => setImmediate(resume, resolve));
  };
}
