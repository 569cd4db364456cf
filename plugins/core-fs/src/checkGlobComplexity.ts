import { ERROR_CODES, ToolError } from '@trellis/sdk';

// fast-glob matches with backtracking JavaScript regexes (picomatch turns `*` into `[^/]*?` and
// `**` into a lazy any-path group), so a failing match costs about name length to the power of
// the wildcard count, and the host's event loop is blocked meanwhile. These bounds keep a match
// in milliseconds on names up to 255 characters and paths a thousand folders deep.

/** Most `*` wildcards in one path segment of a glob (`*a*a*a*a*b` is refused). */
export const MAX_SEGMENT_WILDCARDS = 3;
/** Most `**` segments in one glob. */
export const MAX_GLOBSTARS = 2;
/** Most wildcards (`*` runs and `**` segments) in one glob. */
export const MAX_PATTERN_WILDCARDS = 4;
/** Most patterns one glob may expand to through `{a,b}` alternatives and `{1..9}` ranges. */
export const MAX_BRACE_EXPANSIONS = 64;

/** The limits in words, for tool descriptions. */
export const GLOB_LIMITS = `Patterns that could take minutes to match are refused: at most ${MAX_SEGMENT_WILDCARDS} "*" in one path segment, ${MAX_PATTERN_WILDCARDS} wildcards ("*" and "**") and ${MAX_GLOBSTARS} "**" in all, ${MAX_BRACE_EXPANSIONS} {…} expansions, and no (…) groups or extglobs such as "+(a|b)".`;

const FIX =
  'Use fewer wildcards (e.g. "**/*.test.ts" rather than "**/*a*b*c*d*") and narrow the paths you get back yourself, or search file contents with core-fs.search.';

/**
 * Expands `{a,b}` alternatives and `{1..9}` / `{a..e}` ranges the way fast-glob does, or returns
 * null when there would be more than `MAX_BRACE_EXPANSIONS` patterns.
 */
function expandBraces(pattern: string): string[] | null {
  const out: string[] = [];
  const expand = (text: string): boolean => {
    const group = firstBraceGroup(text);
    if (group === null) {
      out.push(text);
      return out.length <= MAX_BRACE_EXPANSIONS;
    }
    if (group.alternatives.length > MAX_BRACE_EXPANSIONS) return false;
    const before = text.slice(0, group.start);
    const after = text.slice(group.end + 1);
    return group.alternatives.every((alternative) => expand(before + alternative + after));
  };
  return expand(pattern) ? out : null;
}

/** The first `{…}` that expands (it holds a top-level comma or is a range), with its choices. */
function firstBraceGroup(text: string): { start: number; end: number; alternatives: string[] } | null {
  for (let start = 0; start < text.length; start++) {
    if (text[start] === '\\') {
      start++;
      continue;
    }
    if (text[start] !== '{') continue;
    const parts: string[] = [];
    let depth = 0;
    let from = start + 1;
    let end = -1;
    for (let i = start + 1; i < text.length && end === -1; i++) {
      const c = text[i];
      if (c === '\\') i++;
      else if (c === '{') depth++;
      else if (c === '}' && depth > 0) depth--;
      else if (c === '}') end = i;
      else if (c === ',' && depth === 0) {
        parts.push(text.slice(from, i));
        from = i + 1;
      }
    }
    if (end === -1) return null;
    if (parts.length > 0) return { start, end, alternatives: [...parts, text.slice(from, end)] };
    const range = expandRange(text.slice(start + 1, end));
    if (range !== null) return { start, end, alternatives: range };
  }
  return null;
}

/** `1..10`, `1..10..2`, `a..e` as a list, or null when not a range; a long range is cut short. */
function expandRange(body: string): string[] | null {
  const match = /^(-?\d+|[^\d\\])\.\.(-?\d+|[^\d\\])(?:\.\.(-?\d+))?$/.exec(body);
  if (match === null) return null;
  const [, from = '', to = '', stepText] = match;
  const numeric = /\d/.test(from) && /\d/.test(to);
  if (!numeric && (from.length !== 1 || to.length !== 1)) return null;
  const a = numeric ? Number(from) : from.charCodeAt(0);
  const b = numeric ? Number(to) : to.charCodeAt(0);
  const step = Math.max(1, Math.abs(Number(stepText ?? 1)));
  const values: string[] = [];
  // One value past the cap is enough to refuse; never build a range of a million.
  for (let v = a; (a <= b ? v <= b : v >= b) && values.length <= MAX_BRACE_EXPANSIONS; v += a <= b ? step : -step) {
    values.push(numeric ? String(v) : String.fromCharCode(v));
  }
  return values;
}

/**
 * Refuses a glob whose matching could backtrack for seconds or minutes: too many wildcards in a
 * segment or in all, too many `**`, too many brace expansions, groups `(…)` (extglobs such as
 * `+(a|b)` included) and `+` after a `[…]` class, which picomatch passes on as regex repeats.
 * Returns the brace expansions, which fast-glob matches one by one.
 */
export function checkGlobComplexity(argument: string, pattern: string): string[] {
  const refuse = (why: string): never => {
    throw new ToolError(ERROR_CODES.INVALID_ARGUMENT, `${argument}: "${pattern}" ${why}`);
  };
  const expansions =
    expandBraces(pattern) ??
    refuse(
      `expands to more than ${MAX_BRACE_EXPANSIONS} patterns through its {…} alternatives and ranges. Use fewer or shorter {…} groups, or run several globs.`,
    );
  for (const expansion of expansions) {
    const shown = expansion === pattern ? '' : ` (in its expansion "${expansion}")`;
    let globstars = 0;
    let total = 0;
    for (const segment of expansion.split('/')) {
      if (segment === '**') {
        globstars += 1;
        total += 1;
        continue;
      }
      let stars = 0;
      let afterClass = false;
      for (let i = 0; i < segment.length; i++) {
        const c = segment[i];
        const repeatsClass = afterClass;
        afterClass = false;
        if (c === '\\') {
          i++;
        } else if (c === '(' || c === ')') {
          refuse(
            `uses a group "(…)"${shown}. Groups and extglobs such as "+(a|b)" or "@(x)" are not accepted, because their repeats can take minutes to match; use {a,b} for alternatives (e.g. "*.{ts,tsx}"), and write a literal parenthesis as "\\(" or "\\)".`,
          );
        } else if (c === '+' && repeatsClass) {
          refuse(
            `repeats a […] class with "+"${shown}, which can take minutes to match. Use "*" after the class instead, or write a literal plus as "\\+".`,
          );
        } else if (c === '[') {
          const close = classEnd(segment, i);
          if (close !== -1) {
            i = close;
            afterClass = true;
          }
        } else if (c === ']') {
          afterClass = true;
        } else if (c === '*') {
          while (segment[i + 1] === '*') i++;
          stars += 1;
        }
      }
      if (stars > MAX_SEGMENT_WILDCARDS) {
        refuse(
          `has ${stars} "*" wildcards in the path segment "${segment}"${shown}; at most ${MAX_SEGMENT_WILDCARDS} are allowed in one segment, because each one more multiplies the matching time (such a pattern can take minutes). ${FIX}`,
        );
      }
      total += stars;
    }
    if (globstars > MAX_GLOBSTARS) {
      refuse(
        `has ${globstars} "**" segments${shown}; at most ${MAX_GLOBSTARS} are allowed, because each one more multiplies the matching time in deep folders. Set path to the folder to start from and use one "**", e.g. "**/*.ts".`,
      );
    }
    if (total > MAX_PATTERN_WILDCARDS) {
      refuse(
        `has ${total} wildcards ("*" runs and "**" segments)${shown}; at most ${MAX_PATTERN_WILDCARDS} are allowed in one pattern, because each one more multiplies the matching time (such a pattern can take minutes). ${FIX}`,
      );
    }
  }
  return expansions;
}

/** Index of the `]` closing the class that opens at `start`, or -1 when it is a literal `[`. */
function classEnd(text: string, start: number): number {
  let i = start + 1;
  if (text[i] === '!' || text[i] === '^') i++;
  if (text[i] === ']') i++;
  for (; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === ']') return i;
  }
  return -1;
}
