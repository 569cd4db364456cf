/**
 * A piece of synchronous work that says where it may pause: a generator that yields between
 * chunks and returns its result. {@link runSteps} runs it in one go (the CLI, `assemble()`); an
 * async driver may await between the yields so a long-running host keeps serving meanwhile.
 */
export type Steps<T> = Generator<void, T, void>;

/** Runs `steps` to the end without pausing and returns its result. */
export function runSteps<T>(steps: Steps<T>): T {
  for (;;) {
    const step = steps.next();
    if (step.done === true) return step.value;
  }
}

/** Runs `steps`, awaiting `pause()` at each point where it may pause. */
export async function runStepsPausing<T>(steps: Steps<T>, pause: () => Promise<void>): Promise<T> {
  for (;;) {
    const step = steps.next();
    if (step.done === true) return step.value;
    await pause();
  }
}

/** Units of work (manifests walked, admitted, collected) between two pause points. */
export const STEP_CHUNK = 100;
