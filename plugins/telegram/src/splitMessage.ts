/** Telegram's limit on one message's text, in UTF-16 code units. */
export const TELEGRAM_MESSAGE_LIMIT = 4096;

/**
 * Splits a reply into messages of at most `limit` characters, preferring a paragraph break, then
 * a line break, then a space in the second half of each piece; never splits a surrogate pair.
 */
export function splitMessage(text: string, limit = TELEGRAM_MESSAGE_LIMIT): string[] {
  const parts: string[] = [];
  let rest = text;
  while (rest.length > limit) {
    let cut = -1;
    for (const separator of ['\n\n', '\n', ' ']) {
      const at = rest.lastIndexOf(separator, limit - separator.length);
      if (at >= limit / 2) {
        cut = at + separator.length;
        break;
      }
    }
    if (cut < 0) {
      cut = limit;
      const code = rest.charCodeAt(cut - 1);
      if (code >= 0xd800 && code <= 0xdbff) cut -= 1;
    }
    const piece = rest.slice(0, cut).trimEnd();
    if (piece.length > 0) parts.push(piece);
    rest = rest.slice(cut).trimStart();
  }
  if (rest.length > 0) parts.push(rest);
  return parts;
}
