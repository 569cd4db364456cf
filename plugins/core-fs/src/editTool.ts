import { z } from 'zod';
import { ERROR_CODES, ToolError, defineTool } from '@trellis/sdk';
import type { FsSettings } from './FsSettingsSchema.ts';
import { basename, dirname } from 'node:path';
import { displayFolder, readFileIn, refuseHardLinked, writeFileIn } from './fileAccess.ts';
import type { OpenFolder } from './openFolder.ts';
import { openFolder } from './openFolder.ts';
import { confineArgument, pathSchema } from './pathArgument.ts';
import type { TextEncodingName } from './textCodec.ts';
import { decodeText, encodeText } from './textCodec.ts';
import { checkWriteSize, writesDisabled } from './writeTool.ts';

/** Input of `core-fs.edit`. */
export const EditInputSchema = z
  .object({
    path: pathSchema('The existing text file to change.'),
    old: z
      .string()
      .min(1)
      .describe(
        'The exact text to replace, character for character, including spaces, indentation and line breaks. It must occur exactly once unless replace_all is true; include surrounding lines to make it unique.',
      ),
    new: z.string().describe('The text to put in its place (may be empty to delete). Taken literally: no regex, no $-patterns.'),
    replace_all: z.boolean().optional().describe('Replace every occurrence instead of requiring exactly one. Default false.'),
  })
  .strict();

/** Output of `core-fs.edit`. */
export interface EditOutput {
  readonly path: string;
  readonly replacements: number;
  readonly bytes: number;
}

/** Counts non-overlapping occurrences of `needle`. */
export function countOccurrences(haystack: string, needle: string): number {
  let count = 0;
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length)) count += 1;
  return count;
}

/** `core-fs.edit`: exact string replacement with a uniqueness check. */
export const editTool = defineTool<z.infer<typeof EditInputSchema>, EditOutput, FsSettings>({
  name: 'edit',
  description:
    'Changes an existing text file by replacing an exact piece of text (old) with new text. old must match exactly once (copy it from core-fs.read, with enough surrounding lines to be unique) unless replace_all is true. The file keeps its encoding, BOM and permissions and is replaced atomically. Refused when writing is turned off (allow_write), for binary or hard-linked files, and when the result exceeds max_write_bytes.',
  input: EditInputSchema,
  contract: { sideEffects: true, capabilities: ['fs.read', 'fs.write'], idempotent: false },
  tags: ['files', 'write', 'edit'],
  examples: [{ description: 'Rename a function call', input: { path: 'src/app.ts', old: 'oldName(', new: 'newName(', replace_all: true } }],
  async canonicalize(input, ctx) {
    const { path } = await confineArgument(ctx, 'path', input.path);
    return {
      input: { ...input, path: path.real },
      summary: { path: path.display, real: path.real, replaceAll: input.replace_all === true },
    };
  },
  async run(input, ctx) {
    if (!ctx.config.allow_write) throw writesDisabled('edit');
    if (input.old === input.new)
      throw new ToolError(ERROR_CODES.INVALID_ARGUMENT, 'new: is the same as old, so the edit would change nothing.');
    const { root, path } = await confineArgument(ctx, 'path', input.path);
    if (!path.exists) {
      throw new ToolError(ERROR_CODES.NOT_FOUND, `path: "${path.display}" does not exist. To create a file use core-fs.write.`);
    }
    if (path.display === '.')
      throw new ToolError(ERROR_CODES.INVALID_ARGUMENT, 'path: "." is the root folder, not a file. Give a file path such as "notes.txt".');
    // Read and replace through one open folder, so both touch the same file inside the root.
    const folder = await openFolder({ real: dirname(path.real), display: displayFolder(root, path.real), argument: 'path' });
    try {
      return await editIn(folder, basename(path.real), input, path.display, ctx.config);
    } finally {
      await folder.close();
    }
  },
});

/** The edit itself, on `name` in an open folder: read, replace, write back through the same folder. */
async function editIn(
  folder: OpenFolder,
  name: string,
  input: z.infer<typeof EditInputSchema>,
  display: string,
  config: FsSettings,
): Promise<EditOutput> {
  const { bytes, stats } = await readFileIn(folder, name, { display, argument: 'path', maxBytes: config.max_read_bytes });
  refuseHardLinked('path', display, stats);
  const decoded = decodeText(bytes);
  if (decoded.kind === 'binary') {
    throw new ToolError(
      ERROR_CODES.INVALID_ARGUMENT,
      `path: "${display}" looks binary (${decoded.reason}); only text files can be edited.`,
    );
  }
  const text = decoded.text;
  let oldText = input.old;
  let newText = input.new;
  let count = countOccurrences(text, oldText);
  // A model copies lines from read, which shows them with \n; match a CRLF file's own breaks.
  if (count === 0 && text.includes('\r\n') && oldText.includes('\n') && !oldText.includes('\r')) {
    const crlfOld = oldText.replace(/\n/g, '\r\n');
    const crlfCount = countOccurrences(text, crlfOld);
    if (crlfCount > 0) {
      oldText = crlfOld;
      newText = newText.replace(/\r?\n/g, '\r\n');
      count = crlfCount;
    }
  }
  if (count === 0) {
    throw new ToolError(
      ERROR_CODES.INVALID_ARGUMENT,
      `old: the text was not found in "${display}" (0 matches). It must match exactly, including whitespace and line breaks; read the file again with core-fs.read and copy the text from it.`,
    );
  }
  if (count > 1 && input.replace_all !== true) {
    throw new ToolError(
      ERROR_CODES.INVALID_ARGUMENT,
      `old: the text occurs ${count} times in "${display}". Include more surrounding lines so it matches exactly once, or pass replace_all: true to replace all ${count}.`,
    );
  }
  const replacements = input.replace_all === true ? count : 1;
  // Refuse before building: a short old and a long new can make a string of gigabytes.
  const size = bytes.length + replacements * (encodedLength(newText, decoded.encoding) - encodedLength(oldText, decoded.encoding));
  if (size > config.max_write_bytes) {
    throw new ToolError(
      ERROR_CODES.TOO_LARGE,
      `new: replacing ${replacements} ${replacements === 1 ? 'occurrence' : 'occurrences'} of old would make "${display}" ${size} bytes, over the ${config.max_write_bytes}-byte limit ([runtime.tools.fs] max_write_bytes). ${
        replacements > 1
          ? 'Replace fewer occurrences (make old unique and drop replace_all), or use a shorter new text.'
          : 'Use a shorter new text, or write a smaller file.'
      }`,
    );
  }
  const updated = input.replace_all === true ? text.split(oldText).join(newText) : spliceOnce(text, oldText, newText);
  const data = encodeText(updated, decoded.encoding);
  checkWriteSize('new', data.length, config.max_write_bytes);
  await writeFileIn(folder, name, { argument: 'path', display, data, mode: stats.mode & 0o7777 });
  return { path: display, replacements, bytes: data.length };
}

/** Bytes `text` takes in the file's encoding (a lone surrogate counts as the 3-byte U+FFFD UTF-8 writes). */
function encodedLength(text: string, encoding: TextEncodingName): number {
  return encoding === 'utf-16le' || encoding === 'utf-16be' ? text.length * 2 : Buffer.byteLength(text, 'utf8');
}

function spliceOnce(text: string, oldText: string, newText: string): string {
  const at = text.indexOf(oldText);
  return text.slice(0, at) + newText + text.slice(at + oldText.length);
}
