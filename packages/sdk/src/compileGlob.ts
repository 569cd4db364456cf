/** Which glob dialect `compileGlob` speaks. */
export interface GlobOptions {
  /** Compare lower-cased pattern and text (host names). Default false. */
  readonly ignoreCase?: boolean;
  /**
   * A character that `*` and `?` never match, such as `/` for paths: pattern and text must then have
   * it in the same places. Default: none, so `*` matches any run of characters.
   */
  readonly separator?: string;
  /** Let `?` stand for exactly one character (a code point). Default false: `?` is literal. */
  readonly questionMark?: boolean;
}

/**
 * Compiles a wildcard glob into a matcher over the whole text: `*` matches any run of characters
 * (empty included), `?` one character when `questionMark` is on, and every other character only
 * itself — no braces, classes, extglobs, negation or escapes, so a name from a config file never
 * changes meaning. One place for the tool-name (policy), host (core-web) and program (core-command)
 * dialects; file patterns use fast-glob instead.
 *
 * Matching never runs a backtracking regular expression: a greedy scan that returns to the last
 * star takes at most pattern × text steps, so `*a*a*…b` cannot freeze the host.
 */
export function compileGlob(pattern: string, options: GlobOptions = {}): (text: string) => boolean {
  const fold = options.ignoreCase === true ? (text: string) => text.toLowerCase() : (text: string) => text;
  const questionMark = options.questionMark === true;
  const folded = fold(pattern);
  if (!folded.includes('*') && !(questionMark && folded.includes('?'))) return (text) => fold(text) === folded;
  const separator = options.separator;
  if (separator === undefined || !folded.includes(separator)) {
    const matches = compileSegment(folded, questionMark);
    if (separator === undefined) return (text) => matches(fold(text));
    return (text) => {
      const value = fold(text);
      return !value.includes(separator) && matches(value);
    };
  }
  const segments = folded.split(separator).map((segment) => compileSegment(segment, questionMark));
  return (text) => {
    const parts = fold(text).split(separator);
    return parts.length === segments.length && segments.every((matches, index) => matches(parts[index]!));
  };
}

/** A matcher for one segment (no separator inside): `*`, optional `?`, literals. */
function compileSegment(pattern: string, questionMark: boolean): (text: string) => boolean {
  // With `?` the units are code points, so `?` never matches half of a surrogate pair.
  const wanted: ArrayLike<string> = questionMark ? Array.from(pattern) : pattern;
  return (text) => {
    const value: ArrayLike<string> = questionMark ? Array.from(text) : text;
    let at = 0;
    let star = -1;
    let resumeAt = 0;
    for (let index = 0; index < value.length;) {
      const expected = at < wanted.length ? wanted[at] : undefined;
      if (expected === '*') {
        star = at;
        at += 1;
        resumeAt = index;
      } else if (expected !== undefined && (expected === value[index] || (questionMark && expected === '?'))) {
        at += 1;
        index += 1;
      } else if (star >= 0) {
        // Let the last star take one more character and try the rest again.
        at = star + 1;
        resumeAt += 1;
        index = resumeAt;
      } else {
        return false;
      }
    }
    while (at < wanted.length && wanted[at] === '*') at += 1;
    return at === wanted.length;
  };
}
