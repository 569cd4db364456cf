import { describe, expect, it } from 'vitest';
import { linearRegExp, MAX_PATTERN_PROGRAM_SIZE, UnsupportedPatternError } from './linearRegExp.ts';

describe('linearRegExp', () => {
  it('searches like RegExp.prototype.test, in linear time for a catastrophic pattern', () => {
    const re = linearRegExp('^(a+)+$', '');
    expect(re.test('a'.repeat(5000))).toBe(true);
    expect(re.test(`${'a'.repeat(5000)}!`)).toBe(false);
    expect(linearRegExp('b', '').test('abc')).toBe(true);
  });

  it('refuses what the engine cannot run, naming the pattern', () => {
    expect(() => linearRegExp('(a)\\1', '')).toThrow(UnsupportedPatternError);
    expect(() => linearRegExp('(?=a)', '')).toThrow(/pattern "\(\?=a\)" cannot run on the linear-time engine/);
  });

  it(`refuses a program over ${MAX_PATTERN_PROGRAM_SIZE} instructions and keeps real patterns`, () => {
    expect(() => linearRegExp('\\w{999}\\w{999}\\W', '')).toThrow(
      'pattern "\\\\w{999}\\\\w{999}\\\\W" cannot run on the linear-time engine: it compiles to 2001 instructions, more than the 1000 allowed; use smaller counted repetitions ({n}) or a simpler pattern',
    );
    const email =
      "^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$";
    expect(linearRegExp(email, '').test('someone@example.com')).toBe(true);
    expect(
      linearRegExp('^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$', '').test('123e4567-e89b-12d3-a456-426614174000'),
    ).toBe(true);
  });
});
