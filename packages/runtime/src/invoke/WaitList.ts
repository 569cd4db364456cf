import type { CallContext, Parked, Stage } from './CallContext.ts';

/**
 * Calls waiting for one thing many of them need (the validator's first load, a plugin's shared
 * start), each as an entry in a list rather than a suspended async frame: a burst of 10,000 first
 * calls holds 10,000 small records, and they run on in arrival order when the thing is ready.
 */
export class WaitList {
  private calls: CallContext[] = [];
  private released = false;

  /** `ready` settling (either way) ends the wait; the continuations find out how it went. */
  constructor(ready: Promise<unknown>) {
    ready.then(
      () => this.release(),
      () => this.release(),
    );
  }

  /** Parks the call until the wait ends; `continuation` then finishes its stage. */
  add(ctx: CallContext, continuation: Stage): Parked {
    const parked: Parked = ctx.park(continuation);
    if (this.released) queueMicrotask(() => ctx.resume());
    else this.calls.push(ctx);
    return parked;
  }

  private release(): void {
    this.released = true;
    const calls = this.calls;
    this.calls = [];
    for (const ctx of calls) ctx.resume();
  }
}
