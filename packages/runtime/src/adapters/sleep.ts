import { setTimeout as delay } from 'node:timers/promises';

const settle = (): void => {};

/** Waits `ms` milliseconds, or less when `signal` aborts first; never rejects. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return delay(ms, undefined, { signal }).then(settle, settle);
}
