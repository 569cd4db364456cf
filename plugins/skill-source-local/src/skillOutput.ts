/** Characters of stderr quoted in an error message. */
export const STDERR_TAIL_CHARS = 2000;

/**
 * A script's stdout as a value: JSON when the whole output (trimmed) parses as JSON, otherwise
 * `{ message }` with the text (trailing whitespace removed).
 */
export function parseSkillStdout(stdout: string): unknown {
  const trimmed = stdout.trim();
  if (trimmed !== '') {
    try {
      return JSON.parse(trimmed) as unknown;
    } catch {
      // Plain text.
    }
  }
  return { message: stdout.trimEnd() };
}

/** The last `max` characters of `text`, marked when cut. */
export function tailOf(text: string, max = STDERR_TAIL_CHARS): string {
  const trimmed = text.trimEnd();
  return trimmed.length <= max ? trimmed : `…${trimmed.slice(trimmed.length - max)}`;
}

/** Seconds for messages: `60 s`, `0.5 s`. */
export function formatSeconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(3))} s`;
}
