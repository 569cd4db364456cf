import { describe, expect, it } from 'vitest';
import { sleep } from '../../src/adapters/sleep.ts';

describe('sleep', () => {
  it('ends early, and resolves, when its signal aborts', async () => {
    const controller = new AbortController();
    const slept = sleep(600_000, controller.signal).then(() => 'woke');
    controller.abort(new Error('stop'));
    await expect(slept).resolves.toBe('woke');
  });

  it('resolves at once for a signal that is already aborted', async () => {
    await expect(sleep(600_000, AbortSignal.abort()).then(() => 'woke')).resolves.toBe('woke');
  });

  it('waits the time it is given when nothing aborts', async () => {
    const started = performance.now();
    await sleep(50, new AbortController().signal);
    expect(performance.now() - started).toBeGreaterThanOrEqual(45);
  });
});
