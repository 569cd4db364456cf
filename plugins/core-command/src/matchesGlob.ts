/**
 * Matches `text` against a simple glob: `*` is any run of characters except `/`, `?` one
 * character except `/`; everything else is literal. Enough for program names and paths in an
 * allow list, with no surprises from brace or extglob syntax.
 */
export function matchesGlob(pattern: string, text: string): boolean {
  let source = '^';
  for (const char of pattern) {
    if (char === '*') source += '[^/]*';
    else if (char === '?') source += '[^/]';
    else source += char.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`${source}$`, 'u').test(text);
}
