/** Text encodings core-fs recognizes. BOM-less UTF-16 is not guessed: it reads as binary. */
export type TextEncodingName = 'utf-8' | 'utf-8-bom' | 'utf-16le' | 'utf-16be';

/** A decoded file, or why it is not text. */
export type DecodedText =
  | { readonly kind: 'text'; readonly text: string; readonly encoding: TextEncodingName }
  | { readonly kind: 'binary'; readonly reason: string };

function decodeStrict(label: 'utf-8' | 'utf-16le' | 'utf-16be', bytes: Uint8Array): string | null {
  try {
    return new TextDecoder(label, { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return null;
  }
}

/**
 * Decodes file bytes as text. A UTF-8 BOM and UTF-16 LE/BE BOMs are detected and decoded;
 * without a BOM the bytes must be valid UTF-8 without NUL bytes, else the file counts as binary.
 */
export function decodeText(bytes: Uint8Array): DecodedText {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
    const text = decodeStrict('utf-8', bytes.subarray(3));
    return text === null
      ? { kind: 'binary', reason: 'it starts with a UTF-8 BOM but is not valid UTF-8' }
      : { kind: 'text', text, encoding: 'utf-8-bom' };
  }
  if (bytes[0] === 0xff && bytes[1] === 0xfe) {
    const text = decodeStrict('utf-16le', bytes.subarray(2));
    return text === null
      ? { kind: 'binary', reason: 'it starts with a UTF-16 LE BOM but is not valid UTF-16' }
      : { kind: 'text', text, encoding: 'utf-16le' };
  }
  if (bytes[0] === 0xfe && bytes[1] === 0xff) {
    const text = decodeStrict('utf-16be', bytes.subarray(2));
    return text === null
      ? { kind: 'binary', reason: 'it starts with a UTF-16 BE BOM but is not valid UTF-16' }
      : { kind: 'text', text, encoding: 'utf-16be' };
  }
  if (bytes.includes(0)) return { kind: 'binary', reason: 'it contains NUL bytes' };
  const text = decodeStrict('utf-8', bytes);
  return text === null ? { kind: 'binary', reason: 'it is not valid UTF-8 text' } : { kind: 'text', text, encoding: 'utf-8' };
}

/** Encodes text back into the file's encoding, BOM included. */
export function encodeText(text: string, encoding: TextEncodingName): Buffer {
  switch (encoding) {
    case 'utf-8':
      return Buffer.from(text, 'utf8');
    case 'utf-8-bom':
      return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text, 'utf8')]);
    case 'utf-16le':
      return Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
    case 'utf-16be':
      return Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(text, 'utf16le').swap16()]);
  }
}

/** Splits text into lines; a final line break does not start another line. */
export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split(/\r?\n/);
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** Which line breaks the text uses. */
export function lineEndingOf(text: string): 'lf' | 'crlf' | 'mixed' | 'none' {
  const crlf = (text.match(/\r\n/g) ?? []).length;
  const lf = (text.match(/\n/g) ?? []).length;
  if (lf === 0) return 'none';
  if (crlf === lf) return 'crlf';
  return crlf === 0 ? 'lf' : 'mixed';
}
