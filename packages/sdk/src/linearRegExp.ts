import { RE2JS } from 're2js';

// `@trellis/sdk/linear-regexp`: the one regular-expression engine for patterns that come from
// untrusted schemas (the runtime's validator, skill input schemas). A subpath of its own, so that
// re2js loads only with the validators that use it.

/**
 * Largest compiled program a schema `pattern` may have, in RE2 instructions. Matching is linear in
 * the input but grows with the program too: 1,000 covers real patterns (an RFC 5322 e-mail pattern
 * is ~260, a semver one ~65) and keeps a megabyte-long argument to a fraction of a second, where
 * programs of a few thousand instructions took minutes.
 */
export const MAX_PATTERN_PROGRAM_SIZE = 1000;

/** A pattern the linear-time engine cannot run (lookaround, backreferences), cannot parse, or finds too large. */
export class UnsupportedPatternError extends Error {
  readonly pattern: string;

  constructor(pattern: string, reason: string) {
    super(`pattern ${JSON.stringify(pattern)} cannot run on the linear-time engine: ${reason}`);
    this.name = 'UnsupportedPatternError';
    this.pattern = pattern;
  }
}

interface RegExpLike {
  test(input: string): boolean;
}

/**
 * An ajv `code.regExp` engine backed by re2js: matching takes time linear in the input, so a
 * catastrophic pattern such as `(a+)+$` from an untrusted schema cannot freeze the host.
 * Search semantics match JSON Schema's `pattern` (unanchored, like `RegExp.prototype.test`).
 */
export const linearRegExp = Object.assign(
  (pattern: string, _flags: string): RegExpLike => {
    let compiled: RE2JS;
    try {
      compiled = RE2JS.compile(pattern);
    } catch (error) {
      throw new UnsupportedPatternError(pattern, error instanceof Error ? error.message : String(error));
    }
    const size = compiled.programSize();
    if (size > MAX_PATTERN_PROGRAM_SIZE) {
      throw new UnsupportedPatternError(
        pattern,
        `it compiles to ${size} instructions, more than the ${MAX_PATTERN_PROGRAM_SIZE} allowed; use smaller counted repetitions ({n}) or a simpler pattern`,
      );
    }
    return { test: (input: string) => compiled.test(input), toString: () => `re2:${pattern}` } as RegExpLike;
  },
  { code: 're2js' },
);
