import { z } from 'zod';
import type { Stats } from 'node:fs';
import { basename, dirname } from 'node:path';
import { defineTool } from '@trellis/sdk';
import { formatMode } from '@trellis/sdk/internal';
import type { FsSettings } from './FsSettingsSchema.ts';
import { displayFolder, statIn } from './fileAccess.ts';
import { openFolder } from './openFolder.ts';
import { confineArgument, pathSchema } from './pathArgument.ts';

/** Input of `core-fs.stat`. */
export const StatInputSchema = z.object({ path: pathSchema('The file or folder to look at.') }).strict();

/** Output of `core-fs.stat`. */
export type StatOutput =
  | { readonly path: string; readonly exists: false }
  | {
      readonly path: string;
      readonly exists: true;
      readonly type: 'file' | 'directory' | 'other';
      readonly size: number;
      /** Permission bits in octal, e.g. "644". */
      readonly mode: string;
      /** Last modification, ISO 8601 UTC. */
      readonly modified: string;
      /** Number of names this file has; more than 1 means hard links (core-fs will not write to it). */
      readonly hardLinks: number;
    };

/** `core-fs.stat`: whether a path exists, and its type, size, mode and modification time. */
export const statTool = defineTool<z.infer<typeof StatInputSchema>, StatOutput, FsSettings>({
  name: 'stat',
  description:
    'Tells whether a path inside the root exists and, if so, its type (file, directory, other), size in bytes, permission bits, last modification time and hard-link count. Symlinks inside the root are followed and the path shown is where they lead. A missing path is not an error: exists is false.',
  input: StatInputSchema,
  contract: { sideEffects: false, capabilities: ['fs.read'] },
  tags: ['files', 'metadata'],
  examples: [{ description: 'Does package.json exist?', input: { path: 'package.json' } }],
  async canonicalize(input, ctx) {
    const { path } = await confineArgument(ctx, 'path', input.path);
    return { input: { ...input, path: path.real }, summary: { path: path.display, real: path.real } };
  },
  async run(input, ctx): Promise<StatOutput> {
    const { root, path } = await confineArgument(ctx, 'path', input.path);
    if (!path.exists) return { path: path.display, exists: false };
    // Look through the open parent folder (the root itself for "."), so a folder swapped for a
    // symlink on the way cannot make stat describe a file outside the root.
    const isRoot = path.display === '.';
    const folder = await openFolder({
      real: isRoot ? root.real : dirname(path.real),
      display: isRoot ? '.' : displayFolder(root, path.real),
      argument: 'path',
    });
    let info: Stats | null;
    try {
      info = isRoot ? await folder.stat() : await statIn(folder, basename(path.real), { argument: 'path', display: path.display });
    } finally {
      await folder.close();
    }
    if (info === null) return { path: path.display, exists: false };
    return {
      path: path.display,
      exists: true,
      type: info.isFile() ? 'file' : info.isDirectory() ? 'directory' : 'other',
      size: info.size,
      mode: formatMode(info.mode),
      modified: info.mtime.toISOString(),
      hardLinks: info.nlink,
    };
  },
});
