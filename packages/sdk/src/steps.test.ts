import { describe, expect, it } from 'vitest';
import { createPacer, runSteps, runStepsPausing, type Pause, type Steps } from './steps.ts';

function* counting(units: number, done: number[]): Steps<number> {
  for (let i = 0; i < units; i += 1) {
    if (i > 0) yield;
    done.push(i);
  }
  return units;
}

describe('runSteps and runStepsPausing', () => {
  it('run the same work to the same result; the pausing driver asks at every yield and awaits only what it is given', async () => {
    const whole: number[] = [];
    expect(runSteps(counting(5, whole))).toBe(5);
    const stepped: number[] = [];
    const asked: number[] = [];
    const result = await runStepsPausing(counting(5, stepped), () => {
      asked.push(stepped.length);
      // Pause at the second point only: the work between must wait for it.
      return asked.length === 2 ? new Promise((resolve) => setImmediate(resolve)) : undefined;
    });
    expect(result).toBe(5);
    expect(stepped).toEqual(whole);
    expect(asked).toEqual([1, 2, 3, 4]);
  });
});

describe('createPacer', () => {
  it('goes on within its slice, then lets the event loop turn once and starts a new slice', async () => {
    let clock = 100;
    const pause = createPacer(1, { now: () => clock });
    expect(pause()).toBeUndefined();
    clock += 0.9;
    expect(pause()).toBeUndefined();
    clock += 0.2; // 1.1 ms since the slice began
    const order: string[] = [];
    setImmediate(() => order.push('I/O and timers that came due'));
    const waiting = pause();
    expect(waiting).toBeInstanceOf(Promise);
    await waiting?.then(() => order.push('the build again'));
    expect(order).toEqual(['I/O and timers that came due', 'the build again']);
    // A new slice began when the build resumed.
    expect(pause()).toBeUndefined();
    clock += 1;
    expect(pause()).toBeInstanceOf(Promise);
  });

  it('waits before the next slice for what waitBeforeSlice asks, asking again until nothing is asked', async () => {
    let clock = 0;
    const gates: Array<() => void> = [];
    let asked = 0;
    const pause = createPacer(1, {
      now: () => clock,
      maxWaitMs: 1000,
      waitBeforeSlice: () => {
        asked += 1;
        if (asked > 2) return undefined;
        return new Promise<void>((resolve) => gates.push(resolve));
      },
    });
    clock = 2;
    let resumed = false;
    const waiting = pause()?.then(() => (resumed = true));
    expect(waiting).toBeInstanceOf(Promise);
    await until(() => gates.length === 1);
    gates[0]?.();
    await until(() => gates.length === 2);
    expect(resumed).toBe(false);
    gates[1]?.();
    await waiting;
    expect(asked).toBe(3);
    expect(resumed).toBe(true);
  });

  it('stops waiting after maxWaitMs per slice, so the work goes on under constant load', async () => {
    const busy = busyPacer(1, { maxWaitMs: 5 });
    busy.clock = 2;
    await busy.pause();
    // Asked at 2 (clock → 5, 3 ms of the 5 left), the wait ended by its timer, asked at 5 (clock
    // → 8), ended by its timer again; at 8 the 5 ms are over: the slice begins without asking.
    expect(busy.asked).toBe(2);
    expect(busy.clock).toBe(8);
    expect(busy.pause()).toBeUndefined();
  });

  it('waits at most one slice per slice by default', async () => {
    const busy = busyPacer(4);
    busy.clock = 4;
    await busy.pause();
    // 4 ms of waiting at most: asked at 4 (→ 7) and at 7 (→ 10), not at 10.
    expect(busy.asked).toBe(2);
  });
});

/**
 * A pacer on a test clock that is always busy: each ask of `waitBeforeSlice` returns a wait that
 * never ends and moves the clock 3 ms, as time passes while the pacer waits.
 */
function busyPacer(sliceMs: number, options: { maxWaitMs?: number } = {}): { clock: number; asked: number; pause: Pause } {
  const state = { clock: 0, asked: 0 };
  const pause = createPacer(sliceMs, {
    ...options,
    now: () => state.clock,
    waitBeforeSlice: () => {
      state.asked += 1;
      state.clock += 3;
      return new Promise<void>(() => {});
    },
  });
  return Object.assign(state, { pause });
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
}
