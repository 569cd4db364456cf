import { describe, expect, it } from 'vitest';
import { createKeyLocator } from './locateKey.ts';

describe('createKeyLocator', () => {
  const text = [
    '# comment = not a key', //  1
    'top = 1', //                2
    '[plugins]', //              3
    '  profile = "full" # x', // 4
    'allow = [', //              5
    '  "a = b",', //             6
    '  { x = 1 },', //           7
    ']', //                      8
    'note = """', //             9
    'fake = 1', //              10
    '"""', //                   11
    "'quoted.key' = 2", //      12
    '"esc\\"aped" = 3', //      13
    '[runtime.tools.fs]', //    14
    'root.sub = "."', //        15
    '[[arr]]', //               16
    'x = 1', //                 17
    '[[arr]]', //               18
    'x = 2', //                 19
    '[arr.inner]', //           20
    'y = 1', //                 21
    "lit = '''", //             22
    'still = 1', //             23
    "'''", //                   24
  ].join('\r\n');
  const locate = createKeyLocator(text);

  it('finds keys under headers, skipping comments, multi-line arrays and strings', () => {
    expect(locate(['top'])).toEqual({ line: 2, column: 1 });
    expect(locate(['plugins', 'profile'])).toEqual({ line: 4, column: 3 });
    expect(locate(['plugins', 'allow', 1])).toEqual({ line: 5, column: 1 });
    expect(locate(['plugins', 'note'])).toEqual({ line: 9, column: 1 });
    expect(locate(['plugins', 'fake'])).toEqual({ line: 3, column: 1 });
    expect(locate(['plugins', 'quoted.key'])).toEqual({ line: 12, column: 1 });
    expect(locate(['plugins', 'esc"aped'])).toEqual({ line: 13, column: 1 });
    expect(locate(['plugins', 'still'])).toEqual({ line: 3, column: 1 });
  });

  it('finds dotted keys, implicit tables and arrays of tables', () => {
    expect(locate(['runtime', 'tools', 'fs', 'root', 'sub'])).toEqual({ line: 15, column: 1 });
    expect(locate(['runtime', 'tools'])).toEqual({ line: 14, column: 1 });
    expect(locate(['runtime'])).toEqual({ line: 14, column: 1 });
    expect(locate(['arr', 0, 'x'])).toEqual({ line: 17, column: 1 });
    expect(locate(['arr', 1, 'x'])).toEqual({ line: 19, column: 1 });
    expect(locate(['arr', 1, 'inner', 'y'])).toEqual({ line: 21, column: 1 });
  });

  it('returns undefined for a path nothing defines', () => {
    expect(locate(['nowhere'])).toBeUndefined();
  });
});
