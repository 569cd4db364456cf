import { describe, expect, it, vi } from 'vitest';
import type * as SmolToml from 'smol-toml';

// The parser's own depth limit stops nesting long before the stack runs out; these tests make
// sure a stack overflow or an unexpected exception inside it would still become a problem.
const failure = vi.hoisted(() => ({ error: undefined as unknown }));
vi.mock('smol-toml', async (importOriginal) => {
  const real = await importOriginal<typeof SmolToml>();
  return {
    ...real,
    parse: (...args: Parameters<typeof real.parse>) => {
      if (failure.error !== undefined) throw failure.error;
      return real.parse(...args);
    },
  };
});

const { parseRuntimeConfig } = await import('./parseRuntimeConfig.ts');

describe('parseRuntimeConfig when the TOML parser itself fails', () => {
  it('turns a RangeError (stack overflow) into CONFIG_TOO_DEEP', () => {
    failure.error = new RangeError('Maximum call stack size exceeded');
    expect(parseRuntimeConfig('a = 1', { fileName: 'runtime.toml', env: {} })).toEqual({
      value: undefined,
      warnings: [],
      errors: [
        {
          code: 'CONFIG_TOO_DEEP',
          file: 'runtime.toml',
          message: 'runtime.toml: the file nests too deeply to parse (Maximum call stack size exceeded); flatten its tables and arrays',
        },
      ],
    });
  });

  it('turns anything else into INTERNAL_ERROR instead of throwing', () => {
    failure.error = new TypeError('boom');
    expect(parseRuntimeConfig('a = 1', { fileName: 'runtime.toml', env: {} }).errors).toEqual([
      {
        code: 'INTERNAL_ERROR',
        file: 'runtime.toml',
        message: 'runtime.toml: the TOML parser failed unexpectedly (TypeError); please report this with the file',
      },
    ]);
  });
});
