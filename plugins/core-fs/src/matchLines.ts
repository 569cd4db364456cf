import { setImmediate as nextTurn } from 'node:timers/promises';
import { ERROR_CODES, ToolError } from '@trellis/sdk';

/** Finds the first match in one line. */
export interface LineMatcher {
  /** 0-based UTF-16 index of the first match in `line`, or -1. */
  find(line: string): number;
  /** Rough matching work per character (the RE2 program size; 1 for plain text). */
  readonly costPerChar: number;
}

/** Matching work (characters × costPerChar) between two turns of the event loop, about 0.1 s. */
export const WORK_PER_TURN = 4_000_000;

/**
 * Matches `lines` in order and returns the first `limit` matches (1-based line, 1-based column)
 * and whether there were more. Yields to the event loop every WORK_PER_TURN units of work, so the
 * call's deadline can fire during a long file, and throws ABORTED once the signal has.
 */
export async function matchLines(options: {
  lines: readonly string[];
  matcher: LineMatcher;
  limit: number;
  signal: AbortSignal;
  display: string;
}): Promise<{ found: Array<{ line: number; column: number }>; more: boolean }> {
  const { lines, matcher, limit, signal, display } = options;
  const found: Array<{ line: number; column: number }> = [];
  let work = 0;
  for (let i = 0; i < lines.length; i++) {
    if (work >= WORK_PER_TURN) {
      work = 0;
      await nextTurn();
      if (signal.aborted) {
        throw new ToolError(
          ERROR_CODES.ABORTED,
          `Searching "${display}" stopped at line ${i + 1}: the call was aborted (deadline reached or caller gave up).`,
        );
      }
    }
    const line = lines[i]!;
    work += (line.length + 1) * matcher.costPerChar;
    const at = matcher.find(line);
    if (at === -1) continue;
    if (found.length >= limit) return { found, more: true };
    found.push({ line: i + 1, column: at + 1 });
  }
  return { found, more: false };
}
