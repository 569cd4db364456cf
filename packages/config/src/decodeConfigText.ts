import { Buffer, isUtf8 } from 'node:buffer';
import { ERROR_CODES } from '@trellis/sdk';
import { MAX_CONFIG_BYTES, makeProblem } from './ConfigProblem.ts';
import type { ConfigProblem } from './ConfigProblem.ts';

/** The decoded text, or the one problem that stops it from being read as TOML. */
export type DecodedText =
  { readonly text: string; readonly problem?: undefined } | { readonly text?: undefined; readonly problem: ConfigProblem };

/**
 * Turns a config file's bytes (or text) into the text handed to the TOML parser: enforces the
 * size limit, strips a UTF-8 byte order mark, and refuses NUL bytes and invalid UTF-8 with the
 * byte offset, line and column of the first bad byte. CRLF line ends pass through unchanged
 * (TOML allows them).
 */
export function decodeConfigText(input: string | Uint8Array, file: string): DecodedText {
  if (typeof input === 'string') return checkString(input, file);
  if (input.byteLength > MAX_CONFIG_BYTES) return { problem: tooLargeProblem(file, `${input.byteLength} bytes`) };
  if ((input[0] === 0xff && input[1] === 0xfe) || (input[0] === 0xfe && input[1] === 0xff)) {
    return {
      problem: makeProblem({
        code: ERROR_CODES.CONFIG_ENCODING,
        file,
        line: 1,
        column: 1,
        text: 'the file starts with a UTF-16 byte order mark; save it as UTF-8',
      }),
    };
  }
  const bom = input[0] === 0xef && input[1] === 0xbb && input[2] === 0xbf ? 3 : 0;
  const bytes = Buffer.from(input.buffer, input.byteOffset + bom, input.byteLength - bom);
  const nul = bytes.indexOf(0);
  const invalid = isUtf8(bytes) ? -1 : firstInvalidUtf8(bytes);
  // The first bad byte wins: a NUL before any invalid sequence, or the invalid sequence.
  const at = nul !== -1 && (invalid === -1 || nul < invalid) ? nul : invalid;
  if (at !== -1) {
    const { line, column } = byteLocation(bytes, at);
    const text =
      at === nul
        ? `NUL byte at byte offset ${at + bom}; a TOML file cannot contain NUL bytes (is this a binary file?)`
        : `invalid UTF-8 at byte offset ${at + bom}; save the file as UTF-8`;
    return { problem: makeProblem({ code: ERROR_CODES.CONFIG_ENCODING, file, line, column, text }) };
  }
  return { text: bytes.toString('utf8') };
}

function checkString(input: string, file: string): DecodedText {
  // A string of n UTF-16 units holds at most 3n UTF-8 bytes, so most strings skip the exact count.
  if (input.length * 3 > MAX_CONFIG_BYTES) {
    const size = Buffer.byteLength(input, 'utf8');
    if (size > MAX_CONFIG_BYTES) return { problem: tooLargeProblem(file, `${size} bytes`) };
  }
  const text = input.charCodeAt(0) === 0xfeff ? input.slice(1) : input;
  const nul = text.indexOf('\0');
  if (nul !== -1) {
    const before = text.slice(0, nul);
    const lineStart = before.lastIndexOf('\n') + 1;
    const offset = Buffer.byteLength(before, 'utf8') + (text === input ? 0 : 3);
    return {
      problem: makeProblem({
        code: ERROR_CODES.CONFIG_ENCODING,
        file,
        line: countLines(before),
        column: [...before.slice(lineStart)].length + 1,
        text: `NUL byte at byte offset ${offset}; a TOML file cannot contain NUL bytes (is this a binary file?)`,
      }),
    };
  }
  return { text };
}

/** CONFIG_TOO_LARGE for a file of the given size (a phrase such as `2000000 bytes`). */
export function tooLargeProblem(file: string, size: string): ConfigProblem {
  return makeProblem({
    code: ERROR_CODES.CONFIG_TOO_LARGE,
    file,
    text: `the file is ${size}, over the ${MAX_CONFIG_BYTES}-byte (1 MiB) limit; a runtime.toml is a few KiB — check that this is the right file`,
  });
}

function countLines(text: string): number {
  let lines = 1;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) lines++;
  return lines;
}

/** Line and character column of a byte offset; the bytes before it are valid UTF-8. */
function byteLocation(bytes: Uint8Array, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset; i++) {
    if (bytes[i] === 0x0a) {
      line++;
      lineStart = i + 1;
    }
  }
  let column = 1;
  for (let i = lineStart; i < offset; i++) if (((bytes[i] ?? 0) & 0xc0) !== 0x80) column++;
  return { line, column };
}

/** Offset of the first byte that does not belong to a well-formed UTF-8 sequence (RFC 3629). */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  const n = bytes.length;
  let i = 0;
  while (i < n) {
    const b = bytes[i] ?? 0;
    if (b < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let min = 0x80;
    let max = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) need = 1;
    else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      if (b === 0xe0) min = 0xa0;
      if (b === 0xed) max = 0x9f; // no UTF-16 surrogates
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      if (b === 0xf0) min = 0x90;
      if (b === 0xf4) max = 0x8f;
    } else return i;
    for (let k = 1; k <= need; k++) {
      const c = bytes[i + k];
      if (c === undefined) return i;
      if (k === 1 ? c < min || c > max : c < 0x80 || c > 0xbf) return i;
    }
    i += need + 1;
  }
  return -1;
}
