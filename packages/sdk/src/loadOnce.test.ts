import { describe, expect, it } from 'vitest';
import { loadOnce } from './loadOnce.ts';

describe('loadOnce', () => {
  it('loads once for every caller, and again after a failure', async () => {
    let calls = 0;
    let fail = true;
    const load = loadOnce(async () => {
      calls += 1;
      if (fail) throw new Error('not yet');
      return calls;
    });
    const [a, b] = await Promise.allSettled([load(), load()]);
    expect(a.status).toBe('rejected');
    expect(b.status).toBe('rejected');
    expect(calls).toBe(1);
    fail = false;
    expect(await Promise.all([load(), load()])).toEqual([2, 2]);
    expect(await load()).toBe(2);
    expect(calls).toBe(2);
  });
});
