import type { Assembly } from '../assemble.ts';

/**
 * One generation of a live host: an assembly (config, snapshot, catalog, runtime) and the calls
 * it is serving. A retired generation is disposed once its last call has finished.
 */
export class Generation {
  private inFlight = 0;
  private idle: (() => void) | undefined;
  private disposal: Promise<void> | undefined;

  constructor(
    readonly number: number,
    readonly assembly: Assembly,
    /** Enabled plugin id → fingerprint (see `assembleGeneration`). */
    readonly fingerprints: ReadonlyMap<string, string>,
    /** When it started serving (ms since the epoch). */
    readonly since: number,
  ) {}

  /** Marks a call started on this generation; the returned function marks it finished. */
  enter(): () => void {
    this.inFlight += 1;
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.inFlight -= 1;
      if (this.inFlight === 0) this.idle?.();
    };
  }

  /** Calls in flight. */
  calls(): number {
    return this.inFlight;
  }

  /** Waits for the calls in flight, then disposes the assembly (stopping what no later generation holds). */
  retire(): Promise<void> {
    this.disposal ??= (async () => {
      if (this.inFlight > 0) await new Promise<void>((resolve) => (this.idle = resolve));
      await this.assembly.dispose();
    })();
    return this.disposal;
  }
}
