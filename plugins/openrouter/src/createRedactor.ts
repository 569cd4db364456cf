// Shorter keys are placeholders for local servers (`x`, `none`); replacing them would garble messages.
const MIN_REDACTED_KEY_LENGTH = 8;

/**
 * Returns a function that blanks the API key and any `Bearer` token out of text from the endpoint
 * (an error body may echo the `Authorization` header) before it goes into an error or a log.
 */
export function createRedactor(apiKey: string): (text: string) => string {
  return (text) => {
    const withoutKey = apiKey.length >= MIN_REDACTED_KEY_LENGTH ? text.replaceAll(apiKey, '[redacted]') : text;
    return withoutKey.replace(/\bBearer\s+[^\s"',;)]+/gi, 'Bearer [redacted]');
  };
}
