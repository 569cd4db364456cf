import { describe, expect, it } from 'vitest';
import { editDistance, suggestKey } from './suggestKey.ts';

describe('suggestKey', () => {
  const keys = ['profile', 'allow', 'deny', 'paths', 'entries'];
  it.each([
    ['profil', 'profile'],
    ['porfile', 'profile'],
    ['Allow', 'allow'],
    ['dney', 'deny'],
    ['path', 'paths'],
    ['entry', undefined],
    ['zzz', undefined],
    ['x', undefined],
  ])('%s → %s', (unknown, expected) => {
    expect(suggestKey(unknown, keys)).toBe(expected);
  });

  it('treats - and _ alike', () => {
    expect(suggestKey('tool-timeout-seconds', ['tool_timeout_seconds', 'max_retries'])).toBe('tool_timeout_seconds');
  });
});

describe('editDistance', () => {
  it.each([
    ['', '', 0],
    ['abc', 'abc', 0],
    ['abc', 'abd', 1],
    ['abc', 'acb', 1],
    ['kitten', 'sitting', 3],
    ['', 'abc', 3],
  ])('%s / %s = %i', (a, b, d) => {
    expect(editDistance(a, b)).toBe(d);
  });

  it('gives up at the cap', () => {
    expect(editDistance('aaaaaaaa', 'bbbbbbbb', 2)).toBe(2);
  });
});
