// Shorter keys are placeholders for local servers (`x`, `none`); replacing them would garble messages.
const MIN_REDACTED_KEY_LENGTH = 8;

/** Any run of this many characters of the key counts as the key, so a cut or partly echoed key is blanked too. */
const RUN = 8;

/**
 * Returns a function that blanks the API key and any `Bearer` token out of text from the endpoint
 * (an error body may echo the `Authorization` header) before it goes into an error or a log. Every
 * stretch of text made of runs of 8 or more characters of the key is blanked, in any letter case,
 * also where the key is written as a JSON string (`"` and `\` escaped) or URL-encoded.
 */
export function createRedactor(apiKey: string): (text: string) => string {
  const runs = new Set<string>();
  if (apiKey.length >= MIN_REDACTED_KEY_LENGTH) {
    for (const form of [apiKey, JSON.stringify(apiKey).slice(1, -1), encodeURIComponent(apiKey)]) {
      const lower = lowerAscii(form);
      for (let at = 0; at + RUN <= lower.length; at++) runs.add(lower.slice(at, at + RUN));
    }
  }
  return (text) => blankRuns(text, runs).replace(/\bBearer\s+[^\s"',;)]+/gi, 'Bearer [redacted]');
}

/** Replaces each stretch of `text` covered by overlapping `runs` with one `[redacted]`. */
function blankRuns(text: string, runs: ReadonlySet<string>): string {
  if (runs.size === 0) return text;
  const lower = lowerAscii(text);
  let result = '';
  let copied = 0;
  let blankedTo = -1;
  for (let at = 0; at + RUN <= text.length; at++) {
    if (!runs.has(lower.slice(at, at + RUN))) continue;
    // A run that starts inside or right after the stretch blanked last extends it.
    if (at > blankedTo) result += `${text.slice(copied, at)}[redacted]`;
    blankedTo = copied = at + RUN;
  }
  return result + text.slice(copied);
}

/** Lower-cases A–Z only, so every character keeps its position (`toLowerCase` may change lengths). */
function lowerAscii(text: string): string {
  return text.replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
}
