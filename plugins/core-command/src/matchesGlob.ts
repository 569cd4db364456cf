import { compileGlob } from '@trellis/sdk/internal';

/**
 * Matches `text` against a simple glob: `*` is any run of characters except `/`, `?` one
 * character except `/`; everything else is literal. Enough for program names and paths in an
 * allow list, with no surprises from brace or extglob syntax (the sdk's `compileGlob` with `/` as
 * separator).
 */
export function matchesGlob(pattern: string, text: string): boolean {
  return compileGlob(pattern, { separator: '/', questionMark: true })(text);
}
