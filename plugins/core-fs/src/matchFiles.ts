import { lstat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import fg from 'fast-glob';
import { ERROR_CODES, ToolError } from '@trellis/sdk';
import { isPathInside } from '@trellis/sdk/internal';
import { checkGlobComplexity } from './checkGlobComplexity.ts';
import type { FsRoot } from './confinePath.ts';
import { toDisplay } from './confinePath.ts';
import type { OpenFolder } from './openFolder.ts';
import { openFolder } from './openFolder.ts';

/** Folders glob and search skip unless the search starts inside them. */
export const IGNORED_FOLDERS = ['.git', 'node_modules'] as const;

/**
 * Refuses a glob pattern that could name paths outside its base folder, or that could take
 * minutes to match (see checkGlobComplexity). Each `{a,b}` expansion is checked on its own.
 */
export function checkGlobPattern(argument: string, pattern: string): void {
  if (pattern.includes('\0')) {
    throw new ToolError(ERROR_CODES.PATH_NOT_ALLOWED, `${argument}: contains a NUL byte. Pass a plain pattern such as "**/*.ts".`);
  }
  for (const expansion of checkGlobComplexity(argument, pattern)) {
    const shown = expansion === pattern ? '' : ` (in its expansion "${expansion}")`;
    if (expansion.startsWith('/') || /^[A-Za-z]:/.test(expansion)) {
      throw new ToolError(
        ERROR_CODES.PATH_NOT_ALLOWED,
        `${argument}: "${pattern}" is absolute${shown}. Patterns are relative to path (default: the root), e.g. "src/**/*.ts".`,
      );
    }
    if (expansion.split('/').includes('..')) {
      throw new ToolError(
        ERROR_CODES.PATH_NOT_ALLOWED,
        `${argument}: "${pattern}" contains ".."${shown}, which could leave the root. Set path to the folder to search from instead.`,
      );
    }
  }
}

/**
 * Yields absolute paths of regular files under `base` that match `pattern`, never entering
 * symlinked folders or the ignored folders, and dropping anything not verified to be a regular
 * file in a folder inside the root.
 */
export async function* matchFiles(options: { root: FsRoot; base: string; pattern: string; signal: AbortSignal }): AsyncGenerator<string> {
  const stream = fg.stream(options.pattern, {
    cwd: options.base,
    absolute: true,
    dot: true,
    onlyFiles: true,
    followSymbolicLinks: false,
    suppressErrors: true,
    unique: true,
    ignore: IGNORED_FOLDERS.map((name) => `**/${name}/**`),
  });
  // Destroying the stream stops fast-glob's walk, which otherwise runs on without a match to yield.
  const stop = () => (stream as unknown as { destroy(): void }).destroy();
  options.signal.addEventListener('abort', stop, { once: true });
  // Each match is checked through its open folder (opened once for consecutive matches in it):
  // the folder must be the one at that path inside the root, and the name a regular file in it.
  // fast-glob's walk follows paths, so a folder swapped for a symlink mid-walk could make it list
  // the outside; no such name survives this check.
  let folder: { path: string; open: OpenFolder | null } | undefined;
  try {
    for await (const entry of stream) {
      if (options.signal.aborted) break;
      const file = String(entry);
      const parent = dirname(file);
      if (!isPathInside(options.root.real, parent)) continue;
      if (folder?.path !== parent) {
        await folder?.open?.close();
        folder = { path: parent, open: null };
        folder.open = await openFolder({ real: parent, display: toDisplay(options.root, parent), argument: 'path' }).catch(() => null);
      }
      if (folder.open === null) continue;
      const info = await lstat(folder.open.at(basename(file))).catch(() => null);
      if (info?.isFile() === true) yield file;
    }
  } catch (error) {
    // A destroyed stream ends its iteration with a premature-close error.
    if (!options.signal.aborted) throw error;
  } finally {
    options.signal.removeEventListener('abort', stop);
    stop();
    await folder?.open?.close();
  }
  if (options.signal.aborted) {
    throw new ToolError(
      ERROR_CODES.ABORTED,
      `Looking for files under "${toDisplay(options.root, options.base)}" stopped: the call was aborted (deadline reached or caller gave up).`,
    );
  }
}
