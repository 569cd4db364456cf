import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, mkdir, open, rename, unlink } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { basename, dirname, posix, relative, sep } from 'node:path';
import { ERROR_CODES, ToolError } from '@trellis/sdk';
import { describeFileKind, isPathInside } from '@trellis/sdk/internal';
import type { FsRoot } from './confinePath.ts';
import { toDisplay } from './confinePath.ts';
import type { OpenFolder } from './openFolder.ts';
import { changedWhileOpening, openFolder, openFolderIn } from './openFolder.ts';

/** A regular file read whole, with the facts the tools report. */
export interface ReadFile {
  readonly bytes: Buffer;
  readonly stats: Stats;
}

/** Refuses a folder, socket, FIFO or device by name, before anything opens it (a FIFO could block, a device could act). */
function refuseNonRegular(argument: string, display: string, stats: Stats): void {
  if (stats.isFile()) return;
  if (stats.isDirectory()) {
    throw new ToolError(
      ERROR_CODES.INVALID_ARGUMENT,
      `${argument}: "${display}" is a folder, not a file. Use core-fs.list to see what it holds.`,
    );
  }
  throw new ToolError(
    ERROR_CODES.INVALID_ARGUMENT,
    `${argument}: "${display}" is ${describeFileKind(stats)}, not a regular file; core-fs reads and writes only regular files and never opens anything else. Use core-fs.stat to look at it.`,
  );
}

/** The display path of the folder holding `display`. */
function parentDisplay(display: string): string {
  return posix.dirname(display);
}

/** lstat of `name` in an open folder; null when it does not exist. A symlink there is a change since confinement. */
async function entryIn(folder: OpenFolder, name: string, argument: string, display: string): Promise<Stats | null> {
  let info: Stats;
  try {
    info = await lstat(folder.at(name));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
    if (code === 'EACCES' || code === 'EPERM')
      throw new ToolError(ERROR_CODES.NOT_ALLOWED, `${argument}: "${display}" cannot be reached: permission denied.`);
    throw changedWhileOpening(argument, display);
  }
  // confinePath resolved every symlink, so the final name is never one unless it changed since.
  if (info.isSymbolicLink()) throw changedWhileOpening(argument, display);
  return info;
}

/** Facts about `name` in an open folder, or null when it does not exist (stat and write use it). */
export function statIn(folder: OpenFolder, name: string, options: { argument: string; display: string }): Promise<Stats | null> {
  return entryIn(folder, name, options.argument, options.display);
}

/**
 * Reads the regular file `name` of an open folder whole, when it is at most `maxBytes`. Anything
 * else is refused by name before it is opened; the opened file must be the one that was checked
 * (same device and inode), and it is opened without following a symlink (O_NOFOLLOW) and without
 * blocking (O_NONBLOCK).
 */
export async function readFileIn(
  folder: OpenFolder,
  name: string,
  options: { display: string; argument: string; maxBytes: number },
): Promise<ReadFile> {
  const { display, argument, maxBytes } = options;
  const checked = await entryIn(folder, name, argument, display);
  if (checked === null) {
    throw new ToolError(
      ERROR_CODES.NOT_FOUND,
      `${argument}: "${display}" does not exist. Use core-fs.list or core-fs.glob to find the right path.`,
    );
  }
  refuseNonRegular(argument, display, checked);
  refuseTooLarge(argument, display, checked.size, maxBytes);
  let handle: FileHandle;
  try {
    handle = await open(folder.at(name), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT')
      throw new ToolError(
        ERROR_CODES.NOT_FOUND,
        `${argument}: "${display}" does not exist. Use core-fs.list or core-fs.glob to find the right path.`,
      );
    if (code === 'EACCES' || code === 'EPERM')
      throw new ToolError(ERROR_CODES.NOT_ALLOWED, `${argument}: "${display}" cannot be read: permission denied.`);
    // ELOOP (now a symlink), ENXIO (now a socket), …: it is not what was checked.
    throw changedWhileOpening(argument, display);
  }
  try {
    const stats = await handle.stat();
    if (stats.dev !== checked.dev || stats.ino !== checked.ino) throw changedWhileOpening(argument, display);
    refuseNonRegular(argument, display, stats);
    refuseTooLarge(argument, display, stats.size, maxBytes);
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

function refuseTooLarge(argument: string, display: string, size: number, maxBytes: number): void {
  if (size > maxBytes) {
    throw new ToolError(
      ERROR_CODES.TOO_LARGE,
      `${argument}: "${display}" is ${size} bytes, over the ${maxBytes}-byte limit ([runtime.tools.fs] max_read_bytes). Use core-fs.search to find the lines you need, or ask the operator to raise the limit.`,
    );
  }
}

/**
 * Reads a confined, already resolved regular file (`real` as confinePath returned it): its folder
 * is opened and checked to be the one inside the root, then the file is read through it (see
 * readFileIn), so a folder swapped for a symlink meanwhile cannot redirect the read.
 */
export async function readRegularFile(options: { real: string; display: string; argument: string; maxBytes: number }): Promise<ReadFile> {
  const { real, display, argument } = options;
  if (display === '.') {
    throw new ToolError(
      ERROR_CODES.INVALID_ARGUMENT,
      `${argument}: "." is the root folder, not a file. Use core-fs.list to see what it holds.`,
    );
  }
  const folder = await openFolder({ real: dirname(real), display: parentDisplay(display), argument });
  try {
    return await readFileIn(folder, basename(real), options);
  } finally {
    await folder.close();
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
 * Opens the folder `real` (inside the root), first creating the missing folders between the
 * deepest existing one and it, one name at a time, each inside the one opened before it, so
 * no folder is ever created outside the root.
 */
export async function openOrCreateFolder(root: FsRoot, real: string, argument: string): Promise<OpenFolder> {
  if (!isPathInside(root.real, real)) throw changedWhileOpening(argument, toDisplay(root, real));
  const missing: string[] = [];
  let current = real;
  while (current !== root.real) {
    const info = await lstat(current).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return null;
      throw changedWhileOpening(argument, toDisplay(root, current));
    });
    if (info !== null) {
      if (!info.isDirectory() && !info.isSymbolicLink()) {
        throw new ToolError(
          ERROR_CODES.INVALID_ARGUMENT,
          `${argument}: "${toDisplay(root, current)}" is a file, so no folder can be created inside it.`,
        );
      }
      break;
    }
    missing.unshift(basename(current));
    current = dirname(current);
  }
  let folder = await openFolder({ real: current, display: toDisplay(root, current), argument });
  try {
    for (const name of missing) {
      const display = toDisplay(root, `${folder.real}${sep}${name}`);
      try {
        await mkdir(folder.at(name));
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'EACCES' || code === 'EPERM') {
          throw new ToolError(ERROR_CODES.NOT_ALLOWED, `${argument}: the folder "${display}" cannot be created: permission denied.`);
        }
        if (code !== 'EEXIST') throw changedWhileOpening(argument, display);
      }
      const next = await openFolderIn(folder, name, { display, argument });
      await folder.close();
      folder = next;
    }
    return folder;
  } catch (error) {
    await folder.close();
    throw error;
  }
}

/**
 * Replaces `name` in an open folder atomically: writes a temp file beside it (O_EXCL and
 * O_NOFOLLOW, so it never follows a symlink), syncs it, then renames it over the target. Both the
 * temp file and the rename go through the open folder, so they stay inside the root whatever is
 * swapped meanwhile, and the temp file is removed from that same folder when anything fails.
 */
export async function writeFileIn(
  folder: OpenFolder,
  name: string,
  options: {
    argument: string;
    display: string;
    data: Uint8Array;
    /** Permission bits to keep (an existing file's); a new file gets 0o666 less the umask. */
    mode?: number | undefined;
  },
): Promise<void> {
  const { argument, display, data, mode } = options;
  const temp = `.${name.slice(0, 200)}.trellis-${randomBytes(6).toString('hex')}.tmp`;
  let handle: FileHandle;
  try {
    handle = await open(folder.at(temp), constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, mode ?? 0o666);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EACCES' || code === 'EPERM') {
      throw new ToolError(
        ERROR_CODES.NOT_ALLOWED,
        `${argument}: "${display}" cannot be written: the folder "${parentDisplay(display)}" is not writable.`,
      );
    }
    if (code === 'ENOSPC' || code === 'EDQUOT' || code === 'EROFS') {
      throw new ToolError(
        ERROR_CODES.NOT_ALLOWED,
        `${argument}: "${display}" cannot be written (${code}: the disk is full, over quota or read-only).`,
      );
    }
    throw changedWhileOpening(argument, display);
  }
  let renamed = false;
  try {
    try {
      await handle.writeFile(data);
      if (mode !== undefined) await handle.chmod(mode);
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await rename(folder.at(temp), folder.at(name));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EISDIR' || code === 'ENOTEMPTY' || code === 'EEXIST') {
        throw new ToolError(ERROR_CODES.INVALID_ARGUMENT, `${argument}: "${display}" is a folder; only regular files can be written.`);
      }
      if (code === 'EACCES' || code === 'EPERM')
        throw new ToolError(ERROR_CODES.NOT_ALLOWED, `${argument}: "${display}" cannot be replaced: permission denied.`);
      throw changedWhileOpening(argument, display);
    }
    renamed = true;
  } finally {
    if (!renamed) await unlink(folder.at(temp)).catch(() => undefined);
  }
}

/** The folder part of a root-relative display path, for messages. */
export function displayFolder(root: FsRoot, real: string): string {
  const rel = relative(root.real, dirname(real));
  return rel === '' ? '.' : rel.split(sep).join('/');
}
