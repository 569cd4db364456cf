import { describe, expect, it } from 'vitest';
import { compileGlob } from './compileGlob.ts';

const matching = (pattern: string, texts: string[], options = {}) => texts.filter(compileGlob(pattern, options));

describe('compileGlob', () => {
  it('by default: * crosses dots and slashes, ? and other glob syntax are literal, case counts', () => {
    const texts = ['core-fs.read', 'a/b.c', 'A.B', 'a?b', 'axb', '{a,b}', '[ab]', 'a', '!x', 'x'];
    expect(matching('*', texts)).toEqual(texts);
    expect(matching('a*', texts)).toEqual(['a/b.c', 'a?b', 'axb', 'a']);
    expect(matching('a?b', texts)).toEqual(['a?b']);
    expect(matching('{a,b}', texts)).toEqual(['{a,b}']);
    expect(matching('[ab]', texts)).toEqual(['[ab]']);
    expect(matching('!x', texts)).toEqual(['!x']);
    expect(matching('a.b', texts)).toEqual([]);
    expect(matching('', ['', 'a'])).toEqual(['']);
  });

  it('ignoreCase folds pattern and text (host globs)', () => {
    expect(matching('*.Example.com', ['WWW.EXAMPLE.COM', 'example.com', 'a.b.example.com'], { ignoreCase: true })).toEqual([
      'WWW.EXAMPLE.COM',
      'a.b.example.com',
    ]);
    expect(matching('EXAMPLE.com', ['example.COM'], { ignoreCase: true })).toEqual(['example.COM']);
  });

  it('with a separator, * and ? stay inside one segment (program globs)', () => {
    const options = { separator: '/', questionMark: true };
    expect(matching('py*', ['python3', 'py', 'py/x', 'ruby'], options)).toEqual(['python3', 'py']);
    expect(matching('/usr/bin/*', ['/usr/bin/git', '/usr/bin/x/git', '/usr/bin/', '/usr/bin'], options)).toEqual([
      '/usr/bin/git',
      '/usr/bin/',
    ]);
    expect(matching('/usr/*/git', ['/usr/bin/git', '/usr/a/b/git'], options)).toEqual(['/usr/bin/git']);
    expect(matching('python?', ['python3', 'python', 'python/', 'python31'], options)).toEqual(['python3']);
    expect(matching('a.b', ['axb', 'a.b'], options)).toEqual(['a.b']);
  });

  it('? is one code point, not half of a surrogate pair', () => {
    expect(matching('x?y', ['x😀y', 'xay', 'xy'], { questionMark: true })).toEqual(['x😀y', 'xay']);
  });

  it('agrees with a regular-expression reference on every short pattern and text', () => {
    const alphabet = ['a', 'b', '/', '*', '?'];
    const words = (length: number): string[] =>
      length === 0 ? [''] : words(length - 1).flatMap((word) => alphabet.map((char) => word + char));
    const patterns = [0, 1, 2, 3, 4].flatMap(words);
    const texts = [0, 1, 2, 3, 4].flatMap(words).filter((text) => !text.includes('*'));
    const reference = (pattern: string): RegExp =>
      new RegExp(
        `^${[...pattern].map((char) => (char === '*' ? '[^/]*' : char === '?' ? '[^/]' : char.replace(/[/]/g, '\\/'))).join('')}$`,
        'u',
      );
    for (const pattern of patterns) {
      const matches = compileGlob(pattern, { separator: '/', questionMark: true });
      const expected = reference(pattern);
      for (const text of texts) if (matches(text) !== expected.test(text)) throw new Error(`${pattern} vs ${text}`);
    }
    expect(patterns.length * texts.length).toBeGreaterThan(100_000);
  });

  it('stays fast on patterns that make backtracking matchers explode', () => {
    expect(compileGlob(`${'*a'.repeat(100)}b`, { ignoreCase: true })('a'.repeat(253))).toBe(false);
    expect(compileGlob(`${'*a'.repeat(100)}b`, { separator: '/', questionMark: true })('a'.repeat(253))).toBe(false);
    expect(compileGlob(`${'?*'.repeat(100)}b`, { questionMark: true })('a'.repeat(5000))).toBe(false);
  });
});
