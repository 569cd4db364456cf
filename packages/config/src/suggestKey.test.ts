import { describe, expect, it } from 'vitest';
import { suggestKey } from './suggestKey.ts';

describe('suggestKey', () => {
  const keys = ['profile', 'allow', 'deny', 'paths', 'entries'];
  it.each([
    ['profil', 'profile'],
    ['porfile', 'profile'],
    ['Allow', 'allow'],
    // Levenshtein distance: a swap of two letters is two edits, too many for a 4-letter key.
    ['dny', 'deny'],
    ['dney', undefined],
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
