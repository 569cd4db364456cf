import { z } from 'zod';
import { ERROR_CODES, ToolError, defineTool } from '@trellis/sdk';
import type { FsSettings } from './FsSettingsSchema.ts';
import { readRegularFile } from './fileAccess.ts';
import { confineArgument, pathSchema } from './pathArgument.ts';
import { decodeText, lineEndingOf, splitLines } from './textCodec.ts';
import type { TextEncodingName } from './textCodec.ts';

/** Most lines one read returns. */
export const MAX_READ_LINES = 5000;
const DEFAULT_READ_LINES = 2000;
/** Most UTF-8 bytes of text one read returns, so the result stays well under the runtime's output cap. */
export const READ_CONTENT_BUDGET = 256 * 1024;

/** Input of `core-fs.read`. */
export const ReadInputSchema = z
  .object({
    path: pathSchema('The text file to read.'),
    offset: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe('First line to return, 1-based. Default 1. Use it with limit to page through a long file.'),
    limit: z
      .number()
      .int()
      .min(1)
      .max(MAX_READ_LINES)
      .optional()
      .describe(`Most lines to return, 1–${MAX_READ_LINES}. Default ${DEFAULT_READ_LINES}.`),
  })
  .strict();

/** Output of `core-fs.read`. */
export interface ReadOutput {
  readonly path: string;
  readonly encoding: TextEncodingName;
  readonly lineEnding: 'lf' | 'crlf' | 'mixed' | 'none';
  /** Lines in the whole file. */
  readonly totalLines: number;
  /** First and last line returned, 1-based; `endLine` is `startLine - 1` when nothing was returned. */
  readonly startLine: number;
  readonly endLine: number;
  /** The lines, joined with `\n` (line breaks normalized; `lineEnding` tells the original). */
  readonly content: string;
  /** True when lines follow `endLine`: call again with `offset: endLine + 1`. */
  readonly hasMore: boolean;
  /** True when the one line returned was longer than the 256 KiB budget and was cut. */
  readonly lineCut: boolean;
}

/** `core-fs.read`: a text file, or a range of its lines. */
export const readTool = defineTool<z.infer<typeof ReadInputSchema>, ReadOutput, FsSettings>({
  name: 'read',
  description:
    'Reads a text file inside the root and returns its lines (by default the first 2000, at most 256 KiB of text per call), the total line count and the encoding. Use offset and limit to page through long files. UTF-8 (with or without BOM) and UTF-16 with a BOM are decoded; binary files are refused, and files over max_read_bytes (default 1 MiB) are refused: use core-fs.search for those.',
  input: ReadInputSchema,
  contract: { sideEffects: false, capabilities: ['fs.read'] },
  tags: ['files', 'read'],
  examples: [
    { description: 'Read a whole file', input: { path: 'README.md' } },
    { description: 'Read lines 100–149', input: { path: 'src/app.ts', offset: 100, limit: 50 } },
  ],
  async canonicalize(input, ctx) {
    const { path } = await confineArgument(ctx, 'path', input.path);
    return { input: { ...input, path: path.real }, summary: { path: path.display, real: path.real } };
  },
  async run(input, ctx) {
    const { path } = await confineArgument(ctx, 'path', input.path);
    if (!path.exists) {
      throw new ToolError(
        ERROR_CODES.NOT_FOUND,
        `path: "${path.display}" does not exist. Use core-fs.list or core-fs.glob to find the right path.`,
      );
    }
    const { bytes } = await readRegularFile({
      real: path.real,
      display: path.display,
      argument: 'path',
      maxBytes: ctx.config.max_read_bytes,
    });
    const decoded = decodeText(bytes);
    if (decoded.kind === 'binary') {
      throw new ToolError(
        ERROR_CODES.INVALID_ARGUMENT,
        `path: "${path.display}" looks binary (${decoded.reason}), so it is not returned as text. Use core-fs.stat for its size and type.`,
      );
    }
    const lines = splitLines(decoded.text);
    const offset = input.offset ?? 1;
    const limit = input.limit ?? DEFAULT_READ_LINES;
    if (offset > Math.max(lines.length, 1)) {
      throw new ToolError(
        ERROR_CODES.INVALID_ARGUMENT,
        `offset: ${offset} is past the end of "${path.display}", which has ${lines.length} lines. Use an offset from 1 to ${Math.max(lines.length, 1)}.`,
      );
    }
    const slice: string[] = [];
    let budget = READ_CONTENT_BUDGET;
    let lineCut = false;
    for (const line of lines.slice(offset - 1, offset - 1 + limit)) {
      const bytes = Buffer.byteLength(line, 'utf8') + 1;
      if (bytes > budget) {
        if (slice.length === 0) {
          // A single giant line (minified code, data): return its start rather than nothing.
          slice.push(
            Buffer.from(line, 'utf8')
              .subarray(0, READ_CONTENT_BUDGET)
              .toString('utf8')
              .replace(/\uFFFD$/, ''),
          );
          lineCut = true;
        }
        break;
      }
      slice.push(line);
      budget -= bytes;
    }
    const endLine = offset - 1 + slice.length;
    return {
      path: path.display,
      encoding: decoded.encoding,
      lineEnding: lineEndingOf(decoded.text),
      totalLines: lines.length,
      startLine: offset,
      endLine,
      content: slice.join('\n'),
      hasMore: endLine < lines.length,
      lineCut,
    };
  },
});
