import { describe, expect, it } from 'vitest';
import { nestsDeeperThan } from './nestsDeeperThan.ts';

describe('nestsDeeperThan', () => {
  it('counts levels of objects and arrays below the value itself', () => {
    expect(nestsDeeperThan({ a: 1 }, 1)).toBe(false);
    expect(nestsDeeperThan({ a: {} }, 1)).toBe(true);
    expect(nestsDeeperThan([[1]], 2)).toBe(false);
    expect(nestsDeeperThan([[[1]]], 2)).toBe(true);
    expect(nestsDeeperThan('text', 0)).toBe(false);
    expect(nestsDeeperThan({}, 0)).toBe(true);
  });

  it('takes a Date as a value, and walks no deeper than asked on a million-level value', () => {
    expect(nestsDeeperThan({ when: new Date(0) }, 1)).toBe(false);
    let deep: unknown = 1;
    for (let i = 0; i < 1_000_000; i += 1) deep = [deep];
    expect(nestsDeeperThan(deep, 64)).toBe(true);
    expect(nestsDeeperThan([[[[new Date(0)]]]], 4)).toBe(false);
  });
});
