import { describe, expect, it } from 'vitest';
import { createKeepAliveHost } from './keepAlive.ts';

describe('createKeepAliveHost', () => {
  it('shares a value per key, disposes it with its last hold, and makes a fresh one after that', async () => {
    const disposed: string[] = [];
    let made = 0;
    const store = createKeepAliveHost().forPlugin('p');
    const make = () => `value-${(made += 1)}`;
    const dispose = (value: string) => void disposed.push(value);
    const first = store.acquire('k', make, dispose);
    const second = store.acquire('k', make, dispose);
    expect([first.value, first.made, second.value, second.made]).toEqual(['value-1', true, 'value-1', false]);
    await first.release();
    await first.release(); // idempotent: never gives up another holder's hold
    expect(disposed).toEqual([]);
    await second.release();
    expect(disposed).toEqual(['value-1']);
    const third = store.acquire('k', make, dispose);
    expect([third.value, third.made]).toEqual(['value-2', true]);
  });

  it('keeps plugins apart, reports a disposal that throws, and tells reload listeners until they leave', async () => {
    const errors: unknown[] = [];
    const host = createKeepAliveHost((error) => errors.push(error));
    const a = host.forPlugin('a').acquire(
      'k',
      () => 'a',
      () => {
        throw new Error('close failed');
      },
    );
    const b = host.forPlugin('b').acquire(
      'k',
      () => 'b',
      () => undefined,
    );
    expect([a.value, b.value, host.size()]).toEqual(['a', 'b', 2]);
    await a.release();
    expect(errors).toEqual([new Error('close failed')]);
    expect(host.size()).toBe(1);
    let reloads = 0;
    const off = host.forPlugin('b').onReload(() => (reloads += 1));
    host.reloaded();
    off();
    host.reloaded();
    expect(reloads).toBe(1);
  });
});
