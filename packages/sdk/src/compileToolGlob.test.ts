import { describe, expect, it } from 'vitest';
import { compileToolGlob, matchesToolGlob } from './compileToolGlob.ts';

describe('compileToolGlob', () => {
  it('treats * as any run of characters, dots included, and everything else literally', () => {
    const names = ['core-fs.read', 'core-fs.write', 'core-fsx.read', 'mcp.github.create_issue', 'core-web.fetch', 'a.b'];
    const table = Object.fromEntries(
      ['*', 'core-fs.*', 'core-fs.read', 'mcp.*', '*.read', 'core-*.*e*', '*.*.*', 'a.b*', '*a.b', 'core-fs.?ead', '**'].map((pattern) => [
        pattern,
        names.filter(compileToolGlob(pattern)),
      ]),
    );
    expect(table).toEqual({
      '*': names,
      'core-fs.*': ['core-fs.read', 'core-fs.write'],
      'core-fs.read': ['core-fs.read'],
      'mcp.*': ['mcp.github.create_issue'],
      '*.read': ['core-fs.read', 'core-fsx.read'],
      'core-*.*e*': ['core-fs.read', 'core-fs.write', 'core-fsx.read', 'core-web.fetch'],
      '*.*.*': ['mcp.github.create_issue'],
      'a.b*': ['a.b'],
      '*a.b': ['a.b'],
      'core-fs.?ead': [],
      '**': names,
    });
  });

  it('never lets pieces overlap the anchored head and tail', () => {
    expect([
      matchesToolGlob('ab*ba', 'aba'),
      matchesToolGlob('ab*ba', 'abba'),
      matchesToolGlob('a*b*c', 'acb'),
      matchesToolGlob('a*a*a', 'aaa'),
    ]).toEqual([false, true, false, true]);
  });

  it('stays fast on patterns that make backtracking matchers explode', () => {
    const name = 'a'.repeat(5000);
    const pattern = `${'a*'.repeat(200)}b`;
    expect(matchesToolGlob(pattern, name)).toBe(false);
    expect(matchesToolGlob(`${'a*'.repeat(200)}a`, name)).toBe(true);
  });
});
