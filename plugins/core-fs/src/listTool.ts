import { z } from 'zod';
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ERROR_CODES, ToolError, defineTool } from '@trellis/sdk';
import type { FsSettings } from './FsSettingsSchema.ts';
import { toDisplay } from './confinePath.ts';
import type { OpenFolder } from './openFolder.ts';
import { openFolder, openFolderIn } from './openFolder.ts';
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
      .describe(
        'How many levels to descend: 1 lists only the folder itself (default), up to 5. Symlinked folders are shown but never entered.',
      ),
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
    if (!path.exists)
      throw new ToolError(ERROR_CODES.NOT_FOUND, `path: "${path.display}" does not exist. List its parent folder to see what is there.`);
    // For the message only; openFolder below is the check that counts.
    const info = await lstat(path.real).catch(() => null);
    if (info !== null && !info.isDirectory() && !info.isSymbolicLink()) {
      throw new ToolError(
        ERROR_CODES.INVALID_ARGUMENT,
        `path: "${path.display}" is a file, not a folder. Use core-fs.stat or core-fs.read for a file.`,
      );
    }
    const entries: ListEntry[] = [];
    let truncated = false;
    // Every folder is read through its open descriptor and subfolders are opened inside it without
    // following symlinks, so a folder swapped for a symlink mid-walk is never entered.
    const walk = async (folder: OpenFolder, level: number): Promise<void> => {
      const dirents = await readdir(folder.self, { withFileTypes: true }).catch(() => []);
      dirents.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      for (const dirent of dirents) {
        if (ctx.signal.aborted) return;
        if (entries.length >= MAX_LIST_ENTRIES) {
          truncated = true;
          return;
        }
        const shown = toDisplay(root, join(folder.real, dirent.name));
        const type = dirent.isFile() ? 'file' : dirent.isDirectory() ? 'directory' : dirent.isSymbolicLink() ? 'symlink' : 'other';
        if (type === 'file') {
          const size = await lstat(folder.at(dirent.name)).then(
            (s) => s.size,
            () => undefined,
          );
          entries.push(size === undefined ? { path: shown, type } : { path: shown, type, size });
        } else {
          entries.push({ path: shown, type });
        }
        if (type === 'directory' && level < (input.depth ?? 1)) {
          // A subfolder that changed into something else since readdir is listed but not entered.
          const sub = await openFolderIn(folder, dirent.name, { display: shown, argument: 'path' }).catch(() => null);
          if (sub === null) continue;
          try {
            await walk(sub, level + 1);
          } finally {
            await sub.close();
          }
        }
      }
    };
    const top = await openFolder({ real: path.real, display: path.display, argument: 'path' });
    try {
      await walk(top, 1);
    } finally {
      await top.close();
    }
    return { path: path.display, entries, truncated };
  },
});
