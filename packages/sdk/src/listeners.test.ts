import { describe, expect, it } from 'vitest';
import { Listeners } from './listeners.ts';

describe('Listeners', () => {
  it('calls every listener, reports one that throws, and stops calling an unsubscribed one', () => {
    const errors: unknown[] = [];
    const seen: string[] = [];
    const listeners = new Listeners<number>((error) => errors.push(error));
    listeners.add(() => {
      throw new Error('boom');
    });
    const stop = listeners.add((n) => seen.push(`a${n}`));
    listeners.add((n) => seen.push(`b${n}`));
    listeners.emit(1);
    stop();
    listeners.emit(2);
    expect(seen).toEqual(['a1', 'b1', 'b2']);
    expect(errors.map((e) => (e as Error).message)).toEqual(['boom', 'boom']);
  });
});
