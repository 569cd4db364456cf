import { RE2JS } from 're2js';

/** A pattern the linear-time engine cannot run (lookaround, backreferences) or cannot parse. */
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
    return { test: (input: string) => compiled.test(input), toString: () => `re2:${pattern}` } as RegExpLike;
  },
  { code: 're2js' },
);
