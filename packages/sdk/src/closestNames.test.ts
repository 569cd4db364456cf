import { describe, expect, it } from 'vitest';
import { closestName, closestNames } from './closestNames.ts';

describe('closestNames', () => {
  it('measures Levenshtein distance: a swap of two letters is two edits', () => {
    // default limit: max(2, floor(length / 3))
    expect(closestNames('kitten', ['sitting'])).toEqual([]);
    expect(closestNames('kitten', ['sitting'], { maxDistance: () => 3 })).toEqual(['sitting']);
    expect(closestNames('porfile', ['profile'])).toEqual(['profile']);
    expect(closestNames('porfile', ['profile'], { maxDistance: () => 1 })).toEqual([]);
  });

  it('orders nearest first, ties in code-unit order, each name once', () => {
    expect(closestNames('read', ['reed', 'rear', 'read', 'bead', 'reed', 'Xread'])).toEqual(['read', 'Xread', 'bead', 'rear', 'reed']);
  });

  it('is case-sensitive unless asked (core-table columns, skill names, config keys)', () => {
    expect(closestNames('Allow', ['allow'], { maxDistance: () => 0 })).toEqual([]);
    expect(closestNames('Allow', ['allow'], { ignoreCase: true, maxDistance: () => 0 })).toEqual(['allow']);
  });

  it('folds - and _ when asked (config keys)', () => {
    const keys = ['tool_timeout_seconds', 'max_retries'];
    expect(closestNames('tool-timeout-secs', keys, { maxDistance: () => 3 })).toEqual([]);
    expect(closestNames('tool-timeout-secs', keys, { foldSeparators: true, maxDistance: () => 3 })).toEqual(['tool_timeout_seconds']);
  });

  it('counts one name inside the other as one edit when asked (skill names, plugin ids)', () => {
    const names = ['pdf-forms-advanced', 'pdf', 'csv'];
    expect(closestNames('pdf-forms', names)).toEqual([]);
    expect(closestNames('pdf-forms', names, { containment: true })).toEqual(['pdf', 'pdf-forms-advanced']);
  });

  it('passes both normalized strings to maxDistance and cuts at limit', () => {
    const seen: Array<[string, string]> = [];
    const near = closestNames('ABC', ['abd', 'abe', 'abf'], {
      ignoreCase: true,
      maxDistance: (wanted, candidate) => {
        seen.push([wanted, candidate]);
        return 1;
      },
      limit: 2,
    });
    expect(near).toEqual(['abd', 'abe']);
    expect(seen).toEqual([
      ['abc', 'abd'],
      ['abc', 'abe'],
      ['abc', 'abf'],
    ]);
  });

  it('returns nothing for nothing close, and for no candidates', () => {
    expect(closestNames('zzz', ['profile', 'allow'])).toEqual([]);
    expect(closestNames('zzz', [])).toEqual([]);
  });
});

describe('closestName', () => {
  it('is the first of closestNames, or undefined', () => {
    expect(closestName('colr', ['color', 'colour'])).toBe('color');
    expect(closestName('zzz', ['color'])).toBeUndefined();
  });
});
