import { describe, expect, it } from 'vitest';
import { toolErrorOf } from '@trellis/testing';
import { WORK_PER_TURN, matchLines } from '../src/matchLines.ts';
import type { LineMatcher } from '../src/matchLines.ts';

const plain = (text: string): LineMatcher => ({ find: (line) => line.indexOf(text), costPerChar: 1 });

describe('matchLines', () => {
  it('returns matches up to the limit and says whether there were more', async () => {
    const lines = ['a x', 'b', 'x', 'c x'];
    const signal = new AbortController().signal;
    expect(await matchLines({ lines, matcher: plain('x'), limit: 5, signal, display: 'f.txt' })).toEqual({
      found: [
        { line: 1, column: 3 },
        { line: 3, column: 1 },
        { line: 4, column: 3 },
      ],
      more: false,
    });
    expect(await matchLines({ lines, matcher: plain('x'), limit: 2, signal, display: 'f.txt' })).toEqual({
      found: [
        { line: 1, column: 3 },
        { line: 3, column: 1 },
      ],
      more: true,
    });
  });

  it('lets the event loop run inside a long file, so a deadline can stop it there', async () => {
    // 100 lines of 100,000 characters: the loop must give the abort below a turn part-way through.
    const lines = Array.from({ length: 100 }, () => 'a'.repeat(100_000));
    const controller = new AbortController();
    setImmediate(() => controller.abort());
    const stoppedAt = Math.ceil(WORK_PER_TURN / 100_001) + 1;
    expect(
      await toolErrorOf(() => matchLines({ lines, matcher: plain('b'), limit: 10, signal: controller.signal, display: 'big.txt' })),
    ).toEqual({
      code: 'ABORTED',
      message: `Searching "big.txt" stopped at line ${stoppedAt}: the call was aborted (deadline reached or caller gave up).`,
    });
  });
});
