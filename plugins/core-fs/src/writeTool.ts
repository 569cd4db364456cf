import { z } from 'zod';
import { lstat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { ERROR_CODES, ToolError, defineTool } from '@trellis/sdk';
import { describeFileKind } from '@trellis/sdk/internal';
import type { FsSettings } from './FsSettingsSchema.ts';
import { displayFolder, openOrCreateFolder, refuseHardLinked, statIn, writeFileIn } from './fileAccess.ts';
import type { OpenFolder } from './openFolder.ts';
import { openFolder } from './openFolder.ts';
import { confineArgument, pathSchema } from './pathArgument.ts';

/** Input of `core-fs.write`. */
export const WriteInputSchema = z
  .object({
    path: pathSchema('The file to create or replace.'),
    content: z.string().describe('The complete new content of the file, stored as UTF-8. Replaces whatever the file held.'),
    create_parents: z
      .boolean()
      .optional()
      .describe('Create missing parent folders. Default false: writing into a folder that does not exist is an error.'),
  })
  .strict();

/** Output of `core-fs.write`. */
export interface WriteOutput {
  readonly path: string;
  readonly bytes: number;
  /** True when the file did not exist before. */
  readonly created: boolean;
}

/** The message for every write or edit while `allow_write` is false. */
export function writesDisabled(tool: string): ToolError {
  return new ToolError(
    ERROR_CODES.NOT_ALLOWED,
    `core-fs.${tool}: writing is turned off ([runtime.tools.fs] allow_write = false, the default). You cannot create or change files; tell the user, who can set allow_write = true under [runtime.tools.fs] in runtime.toml.`,
  );
}

/** Refuses content over `max_write_bytes`. */
export function checkWriteSize(argument: string, bytes: number, max: number): void {
  if (bytes > max) {
    throw new ToolError(
      ERROR_CODES.TOO_LARGE,
      `${argument}: the new content is ${bytes} bytes, over the ${max}-byte limit ([runtime.tools.fs] max_write_bytes). Write a smaller file, or split it into several.`,
    );
  }
}

/** `core-fs.write`: create or replace a whole file, atomically. */
export const writeTool = defineTool<z.infer<typeof WriteInputSchema>, WriteOutput, FsSettings>({
  name: 'write',
  description:
    'Creates a file or replaces its whole content (UTF-8) inside the root, atomically: readers see the old or the new file, never half of it. For a small change to an existing file prefer core-fs.edit. Set create_parents to create missing folders. Refused when writing is turned off (allow_write), for content over max_write_bytes (default 1 MiB), for hard-linked files, and for any path leading out of the root.',
  input: WriteInputSchema,
  contract: { sideEffects: true, capabilities: ['fs.write'], idempotent: true },
  tags: ['files', 'write'],
  examples: [{ description: 'Create a note', input: { path: 'notes/todo.md', content: '# Todo\n', create_parents: true } }],
  async canonicalize(input, ctx) {
    const { path } = await confineArgument(ctx, 'path', input.path);
    return {
      input: { ...input, path: path.real },
      summary: { path: path.display, real: path.real, exists: path.exists, bytes: Buffer.byteLength(input.content, 'utf8') },
    };
  },
  async run(input, ctx) {
    if (!ctx.config.allow_write) throw writesDisabled('write');
    const data = Buffer.from(input.content, 'utf8');
    checkWriteSize('content', data.length, ctx.config.max_write_bytes);
    const { root, path } = await confineArgument(ctx, 'path', input.path);
    if (path.display === '.')
      throw new ToolError(ERROR_CODES.INVALID_ARGUMENT, 'path: names the root folder itself; give a file path such as "notes.txt".');
    const folderReal = dirname(path.real);
    let folder: OpenFolder;
    if (input.create_parents === true) {
      folder = await openOrCreateFolder(root, folderReal, 'path');
    } else {
      if ((await lstat(folderReal).catch(() => null)) === null) {
        throw new ToolError(
          ERROR_CODES.NOT_FOUND,
          `path: the folder "${displayFolder(root, path.real)}" does not exist. Pass create_parents: true to create it, or check the path with core-fs.list.`,
        );
      }
      folder = await openFolder({ real: folderReal, display: displayFolder(root, path.real), argument: 'path' });
    }
    let created: boolean;
    try {
      const name = basename(path.real);
      const existing = await statIn(folder, name, { argument: 'path', display: path.display });
      if (existing !== null && !existing.isFile()) {
        throw new ToolError(
          ERROR_CODES.INVALID_ARGUMENT,
          `path: "${path.display}" is ${describeFileKind(existing)}; only regular files can be written.`,
        );
      }
      if (existing !== null) refuseHardLinked('path', path.display, existing);
      created = existing === null;
      await writeFileIn(folder, name, {
        argument: 'path',
        display: path.display,
        data,
        mode: existing === null ? undefined : existing.mode & 0o7777,
      });
    } finally {
      await folder.close();
    }
    return { path: path.display, bytes: data.length, created };
  },
});
