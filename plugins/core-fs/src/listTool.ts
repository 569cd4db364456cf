import { z } from 'zod';
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ERROR_CODES, ToolError, defineTool } from '@trellis/sdk';
import type { FsSettings } from './FsSettingsSchema.ts';
import { toDisplay } from './confinePath.ts';
import { confineArgument, pathSchema } from './pathArgument.ts';

/** Most entries one list returns. */
export const MAX_LIST_ENTRIES = 1000;

/** Input of `core-fs.list`. */
export const ListInputSchema = z
  .object({
    path: pathSchema('The folder to list. Default "." (the root).').optional(),
    depth: z
      .number()
      .int()
      .min(1)
      .max(5)
      .optional()
      .describe('How many levels to descend: 1 lists only the folder itself (default), up to 5. Symlinked folders are shown but never entered.'),
  })
  .strict();

/** One entry of `core-fs.list`. */
export interface ListEntry {
  /** Relative to the root, `/`-separated; usable as a path argument as is. */
  readonly path: string;
  readonly type: 'file' | 'directory' | 'symlink' | 'other';
  /** Bytes, for files only. */
  readonly size?: number;
}

/** Output of `core-fs.list`. */
export interface ListOutput {
  readonly path: string;
  readonly entries: readonly ListEntry[];
  /** True when more than the entry cap existed; list a subfolder or lower depth. */
  readonly truncated: boolean;
}

/** `core-fs.list`: a folder's entries, optionally a few levels deep. */
export const listTool = defineTool<z.infer<typeof ListInputSchema>, ListOutput, FsSettings>({
  name: 'list',
  description: `Lists a folder inside the root: each entry's path (relative to the root), type (file, directory, symlink, other) and file size, sorted by name. depth (1–5) descends into subfolders; symlinks are listed but never followed. At most ${MAX_LIST_ENTRIES} entries; for patterns across a tree use core-fs.glob.`,
  input: ListInputSchema,
  contract: { sideEffects: false, capabilities: ['fs.read'] },
  tags: ['files', 'list', 'directory'],
  examples: [
    { description: 'The root folder', input: {} },
    { description: 'Two levels of src', input: { path: 'src', depth: 2 } },
  ],
  async canonicalize(input, ctx) {
    const { path } = await confineArgument(ctx, 'path', input.path ?? '.');
    return { input: { ...input, path: path.real }, summary: { path: path.display, real: path.real } };
  },
  async run(input, ctx) {
    const { root, path } = await confineArgument(ctx, 'path', input.path ?? '.');
    if (!path.exists) throw new ToolError(ERROR_CODES.NOT_FOUND, `path: "${path.display}" does not exist. List its parent folder to see what is there.`);
    if (!(await lstat(path.real)).isDirectory()) {
      throw new ToolError(ERROR_CODES.INVALID_ARGUMENT, `path: "${path.display}" is a file, not a folder. Use core-fs.stat or core-fs.read for a file.`);
    }
    const entries: ListEntry[] = [];
    let truncated = false;
    const walk = async (folder: string, level: number): Promise<void> => {
      const dirents = await readdir(folder, { withFileTypes: true }).catch(() => []);
      dirents.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      for (const dirent of dirents) {
        if (ctx.signal.aborted) return;
        if (entries.length >= MAX_LIST_ENTRIES) {
          truncated = true;
          return;
        }
        const full = join(folder, dirent.name);
        const type = dirent.isFile() ? 'file' : dirent.isDirectory() ? 'directory' : dirent.isSymbolicLink() ? 'symlink' : 'other';
        if (type === 'file') {
          const size = await lstat(full).then((s) => s.size, () => undefined);
          entries.push(size === undefined ? { path: toDisplay(root, full), type } : { path: toDisplay(root, full), type, size });
        } else {
          entries.push({ path: toDisplay(root, full), type });
        }
        if (type === 'directory' && level < (input.depth ?? 1)) await walk(full, level + 1);
      }
    };
    await walk(path.real, 1);
    return { path: path.display, entries, truncated };
  },
});
