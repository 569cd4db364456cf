// Shorter keys are placeholders for local servers (`x`, `none`); replacing them would garble messages.
const MIN_REDACTED_KEY_LENGTH = 8;

/**
 * Any run of this many characters of the key (of the whole key, when shorter) counts as the key, so
 * a cut or partly echoed key is blanked too; fewer would blank ordinary words that a placeholder key
 * for a local server contains (`sk-no-key-required` and "is required").
 */
const RUN = 12;

/**
 * Returns a function that blanks the API key and any `Bearer` token out of text from the endpoint
 * (an error body may echo the `Authorization` header) before it goes into an error or a log. Every
 * stretch of text made of runs of 12 or more characters of the key is blanked, in any letter case,
 * also where the key is written as a JSON string (`"` and `\` escaped) or URL-encoded.
 */
export function createRedactor(apiKey: string): (text: string) => string {
  const runs = new Set<string>();
  const run = Math.min(RUN, apiKey.length);
  if (apiKey.length >= MIN_REDACTED_KEY_LENGTH) {
    for (const form of [apiKey, JSON.stringify(apiKey).slice(1, -1), encodeURIComponent(apiKey)]) {
      const lower = lowerAscii(form);
      for (let at = 0; at + run <= lower.length; at++) runs.add(lower.slice(at, at + run));
    }
  }
  return (text) => blankRuns(text, runs, run).replace(/\bBearer\s+[^\s"',;)]+/gi, 'Bearer [redacted]');
}

/** Replaces each stretch of `text` covered by overlapping `runs` (each `run` characters) with one `[redacted]`. */
function blankRuns(text: string, runs: ReadonlySet<string>, run: number): string {
  if (runs.size === 0) return text;
  const lower = lowerAscii(text);
  let result = '';
  let copied = 0;
  let blankedTo = -1;
  for (let at = 0; at + run <= text.length; at++) {
    if (!runs.has(lower.slice(at, at + run))) continue;
    // A run that starts inside or right after the stretch blanked last extends it.
    if (at > blankedTo) result += `${text.slice(copied, at)}[redacted]`;
    blankedTo = copied = at + run;
  }
  return result + text.slice(copied);
}

/** Lower-cases A–Z only, so every character keeps its position (`toLowerCase` may change lengths). */
function lowerAscii(text: string): string {
  return text.replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
}
