import { compileToolGlob } from '@trellis/sdk/internal';

/** The first pattern in `patterns` that matches `name`, or undefined. */
export function firstMatchingGlob(patterns: readonly string[], name: string): string | undefined {
  for (const pattern of patterns) if (compileToolGlob(pattern)(name)) return pattern;
  return undefined;
}
