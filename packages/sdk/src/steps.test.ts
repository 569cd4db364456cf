import { describe, expect, it } from 'vitest';
import { createPacer, runSteps, runStepsPausing, type Steps } from './steps.ts';

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
    const pause = createPacer(1, () => clock);
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
});
