import type { Logger } from '@trellis/sdk';

/** Shorter secrets (a test's `x`) are not blanked: replacing them would garble messages. */
const MIN_REDACTED_LENGTH = 8;

/**
 * Returns a function that blanks the bot token out of text, in any letter case: the whole token, and
 * its secret part (after the colon; the bot id before it is no secret). A Bot API server may echo the
 * request path, `/bot<token>/<method>`, in an error description.
 */
export function createTokenRedactor(token: string): (text: string) => string {
  const secrets = [token, token.slice(token.indexOf(':') + 1)].filter((secret) => secret.length >= MIN_REDACTED_LENGTH);
  if (secrets.length === 0) return (text) => text;
  const pattern = new RegExp(secrets.map((secret) => secret.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'gi');
  return (text) =>
    text.replace(pattern, (found) => (found.includes(':') ? `${found.slice(0, found.indexOf(':') + 1)}[redacted]` : '[redacted]'));
}

/** `logger` with `redact` applied to every message and every string in its fields. */
export function redactingLogger(logger: Logger, redact: (text: string) => string): Logger {
  const clean = (value: unknown): unknown => {
    if (typeof value === 'string') return redact(value);
    if (Array.isArray(value)) return value.map(clean);
    if (typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype) {
      return Object.fromEntries(Object.entries(value).map(([key, field]) => [key, clean(field)]));
    }
    return value;
  };
  const at =
    (level: keyof Logger): Logger[keyof Logger] =>
    (message, fields) =>
      logger[level](redact(message), fields === undefined ? undefined : (clean(fields) as typeof fields));
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}
