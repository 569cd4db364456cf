import { ERROR_CODES, ProviderError } from '@trellis/sdk';

/**
 * Refuses an API key that cannot go in an `Authorization` header (a pasted line break, a space,
 * a control or non-ASCII character). The message says where, never what: fetch's own error would
 * print the key.
 */
export function checkApiKey(apiKey: string): void {
  const characters = [...apiKey];
  const position = characters.findIndex((c) => c < '!' || c > '~');
  if (position === -1) return;
  const c = characters[position]!;
  const what = c === '\n' || c === '\r' ? 'a line break' : c === ' ' ? 'a space' : c > '~' ? 'not ASCII' : 'a control character';
  throw new ProviderError(
    ERROR_CODES.PROVIDER_UNAVAILABLE,
    `OPENROUTER_API_KEY cannot be sent in an HTTP header: character ${position + 1} is ${what}; set it to the key alone, without spaces or line breaks`,
  );
}
