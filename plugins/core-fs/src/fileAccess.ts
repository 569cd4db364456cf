import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, mkdir, open, realpath, rename, unlink } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { basename, dirname, join, relative, sep } from 'node:path';
import { ERROR_CODES, ToolError, isPathInside } from '@trellis/sdk';
import type { FsRoot } from './confinePath.ts';
import { toDisplay } from './confinePath.ts';

/** A regular file read whole, with the facts the tools report. */
export interface ReadFile {
  readonly bytes: Buffer;
  readonly stats: Stats;
}

/**
 * Opens a confined, already resolved file without following a symlink swapped in since it was
 * checked (O_NOFOLLOW), without blocking on a FIFO (O_NONBLOCK), and reads it whole when it is a
 * regular file of at most `maxBytes`.
 */
export async function readRegularFile(options: { real: string; display: string; argument: string; maxBytes: number }): Promise<ReadFile> {
  const { real, display, argument, maxBytes } = options;
  let handle;
  try {
    handle = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new ToolError(ERROR_CODES.NOT_FOUND, `${argument}: "${display}" does not exist. Use core-fs.list or core-fs.glob to find the right path.`);
    if (code === 'ELOOP') throw new ToolError(ERROR_CODES.PATH_NOT_ALLOWED, `${argument}: "${display}" became a symlink while it was being opened; try again.`, { retryable: true });
    if (code === 'EACCES') throw new ToolError(ERROR_CODES.NOT_ALLOWED, `${argument}: "${display}" cannot be read: permission denied.`);
    throw error;
  }
  try {
    const stats = await handle.stat();
    if (stats.isDirectory()) {
      throw new ToolError(ERROR_CODES.INVALID_ARGUMENT, `${argument}: "${display}" is a folder, not a file. Use core-fs.list to see what it holds.`);
    }
    if (!stats.isFile()) {
      throw new ToolError(ERROR_CODES.INVALID_ARGUMENT, `${argument}: "${display}" is not a regular file (a device, socket or FIFO); only regular files can be read.`);
    }
    if (stats.size > maxBytes) {
      throw new ToolError(
        ERROR_CODES.TOO_LARGE,
        `${argument}: "${display}" is ${stats.size} bytes, over the ${maxBytes}-byte limit ([runtime.tools.fs] max_read_bytes). Use core-fs.search to find the lines you need, or ask the operator to raise the limit.`,
      );
    }
    const bytes = Buffer.alloc(stats.size);
    let filled = 0;
    while (filled < bytes.length) {
      const { bytesRead } = await handle.read(bytes, filled, bytes.length - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return { bytes: bytes.subarray(0, filled), stats };
  } finally {
    await handle.close();
  }
}

/** Refuses to change a file that has more than one hard link. */
export function refuseHardLinked(argument: string, display: string, stats: Stats): void {
  if (stats.nlink > 1) {
    throw new ToolError(
      ERROR_CODES.NOT_ALLOWED,
      `${argument}: "${display}" has ${stats.nlink} hard links. Another name for the same file may lie outside the root, so core-fs will not change it (a write would also split the names apart). Write to a new file instead, or ask the user to replace the hard link with a copy.`,
    );
  }
}

/**
 * Creates the missing folders between the deepest existing one and `folder`, one name at a time,
 * checking after each that nothing on the way is a symlink and it all stays inside the root.
 */
export async function createParents(root: FsRoot, folder: string, argument: string): Promise<void> {
  const missing: string[] = [];
  let current = folder;
  for (;;) {
    try {
      const info = await lstat(current);
      if (!info.isDirectory()) {
        throw new ToolError(ERROR_CODES.INVALID_ARGUMENT, `${argument}: "${toDisplay(root, current)}" is a file, so no folder can be created inside it.`);
      }
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      missing.unshift(basename(current));
      current = dirname(current);
    }
  }
  for (const name of missing) {
    const next = join(current, name);
    try {
      await mkdir(next);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const info = await lstat(next);
    if (!info.isDirectory() || !isPathInside(root.real, await realpath(next))) {
      throw new ToolError(ERROR_CODES.PATH_NOT_ALLOWED, `${argument}: "${toDisplay(root, next)}" changed into something other than a folder while it was being created; try again.`, { retryable: true });
    }
    current = next;
  }
}

/**
 * Replaces `real` atomically: writes a temp file in the same folder (O_EXCL, so it never follows a
 * symlink), syncs it, then renames it over the target. The folder's realpath is checked again
 * right before the rename, so a symlink swapped into the path cannot redirect the write.
 */
export async function writeFileAtomic(options: {
  root: FsRoot;
  real: string;
  argument: string;
  data: Uint8Array;
  /** Permission bits to keep (an existing file's); a new file gets 0o666 less the umask. */
  mode?: number;
}): Promise<void> {
  const { root, real, argument, data, mode } = options;
  const folder = dirname(real);
  const temp = join(folder, `.${basename(real).slice(0, 200)}.trellis-${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, mode ?? 0o666);
  let renamed = false;
  try {
    try {
      await handle.writeFile(data);
      if (mode !== undefined) await handle.chmod(mode);
      await handle.sync();
    } finally {
      await handle.close();
    }
    const folderNow = await realpath(folder);
    if (folderNow !== folder || !isPathInside(root.real, folderNow)) {
      throw new ToolError(
        ERROR_CODES.PATH_NOT_ALLOWED,
        `${argument}: the folder "${toDisplay(root, folder)}" was replaced by a symlink while writing; nothing was written.`,
      );
    }
    await rename(temp, real);
    renamed = true;
  } finally {
    if (!renamed) await unlink(temp).catch(() => undefined);
  }
}

/** The folder part of a root-relative display path, for messages. */
export function displayFolder(root: FsRoot, real: string): string {
  const rel = relative(root.real, dirname(real));
  return rel === '' ? '.' : rel.split(sep).join('/');
}
