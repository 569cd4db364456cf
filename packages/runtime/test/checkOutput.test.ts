import { describe, expect, it } from 'vitest';
import { checkOutput } from '../src/checkOutput.ts';

describe('checkOutput', () => {
  it('accepts JSON values, including ones only the exact path can vouch for', () => {
    const shared = { a: 1 };
    const values: unknown[] = [
      null,
      undefined,
      0,
      'text',
      { text: 'héllo', list: [1, null, true, { deep: ['x'] }] },
      { when: new Date(0) }, // toJSON
      [shared, shared], // the same object twice is not a cycle
      'x'.repeat(400), // bound 2402 > 1000, exactly 402
      Object.create({ inherited: () => 1 }), // inherited properties are not serialized
    ];
    expect(values.map((value) => checkOutput(value, 't.x', 1_000))).toEqual(values.map(() => undefined));
  });

  it('measures UTF-8 bytes exactly near the cap', () => {
    expect(checkOutput('é'.repeat(499), 't.x', 1_000)).toBeUndefined(); // 998 + 2 quotes
    expect(checkOutput('é'.repeat(500), 't.x', 1_000)).toEqual({
      code: 'OUTPUT_TOO_LARGE',
      message:
        't.x returned 1002 bytes of JSON, more than [runtime] max_output_bytes = 1000; ask for less (a smaller limit or range) or raise the cap',
      retryable: false,
    });
  });

  it('refuses top-level functions and symbols, and a getter that throws', () => {
    const throwing = {
      get boom(): never {
        throw new Error('getter failed');
      },
    };
    expect([() => 1, Symbol('s'), throwing].map((value) => checkOutput(value, 't.x', 1_000)?.message)).toEqual([
      't.x returned a result that cannot be serialized to JSON: the result is a function (a bug in the tool)',
      't.x returned a result that cannot be serialized to JSON: the result is symbol (a bug in the tool)',
      't.x returned a result that cannot be serialized to JSON: getter failed (a bug in the tool)',
    ]);
  });
});
