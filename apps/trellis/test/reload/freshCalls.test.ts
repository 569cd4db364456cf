import { describe, expect, it } from 'vitest';
import { trackFreshCalls } from '../../src/reload/freshCalls.ts';

describe('trackFreshCalls', () => {
  it('asks no wait when no call is in flight', () => {
    const calls = trackFreshCalls({ now: () => 0 });
    expect(calls.whileFresh()).toBeUndefined();
    const done = calls.begin();
    done();
    expect(calls.whileFresh()).toBeUndefined();
  });

  it('waits while a fresh call is in flight, until a call finishes', async () => {
    let clock = 0;
    const calls = trackFreshCalls({ freshMs: 60_000, now: () => clock });
    const done = calls.begin();
    clock = 1;
    const waiting = calls.whileFresh();
    expect(waiting).toBeInstanceOf(Promise);
    let settled = false;
    void waiting?.then(() => (settled = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    done();
    await waiting;
    expect(settled).toBe(true);
    expect(calls.whileFresh()).toBeUndefined();
    // Finishing twice changes nothing.
    done();
    expect(calls.whileFresh()).toBeUndefined();
  });

  it('does not wait for a call that is no longer fresh (a slow call)', () => {
    let clock = 0;
    const calls = trackFreshCalls({ freshMs: 5, now: () => clock });
    calls.begin();
    clock = 4.9;
    expect(calls.whileFresh()).toBeInstanceOf(Promise);
    clock = 5;
    expect(calls.whileFresh()).toBeUndefined();
  });

  it('goes on waiting while a younger call is still in flight after an older one finished', () => {
    let clock = 0;
    const calls = trackFreshCalls({ freshMs: 5, now: () => clock });
    const older = calls.begin();
    clock = 3;
    calls.begin();
    older();
    clock = 6; // the older one would be stale now; the younger one is 3 ms old
    expect(calls.whileFresh()).toBeInstanceOf(Promise);
    clock = 8;
    expect(calls.whileFresh()).toBeUndefined();
  });

  it('ends the wait when the oldest fresh call turns stale, even if it never finishes', async () => {
    let clock = 0;
    const calls = trackFreshCalls({ freshMs: 5, now: () => clock });
    calls.begin();
    clock = 4;
    const waiting = calls.whileFresh();
    expect(waiting).toBeInstanceOf(Promise);
    clock = 5;
    await waiting; // resolved by its timer (1 ms of real time)
    expect(calls.whileFresh()).toBeUndefined();
  });

  it('keeps no record of calls long finished, however many were served', () => {
    let clock = 0;
    const calls = trackFreshCalls({ freshMs: 5, now: () => clock });
    const slow = calls.begin(); // in flight throughout: does not keep the finished calls after it
    for (let i = 0; i < 100_000; i += 1) {
      clock += 1;
      calls.begin()();
    }
    expect(calls.held()).toBeLessThanOrEqual(2048);
    slow();
    clock += 10;
    expect(calls.whileFresh()).toBeUndefined();
  });

  it('keeps the fresh call in flight when it drops a long run of stale ones', () => {
    let clock = 0;
    const calls = trackFreshCalls({ freshMs: 5, now: () => clock });
    for (let i = 0; i < 1024; i += 1) calls.begin(); // hang, and turn stale below
    clock = 3;
    calls.begin(); // the fresh one, still in flight
    clock = 6;
    calls.begin()(); // drops the 1,024 (and compacts the record), then ends at once
    expect(calls.held()).toBeLessThan(1024);
    expect(calls.whileFresh()).toBeInstanceOf(Promise);
    clock = 8;
    expect(calls.whileFresh()).toBeUndefined();
  });
});
