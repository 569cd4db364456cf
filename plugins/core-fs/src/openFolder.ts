import { constants } from 'node:fs';
import type { Stats } from 'node:fs';
import { open } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { ERROR_CODES, ToolError } from '@trellis/sdk';
import { descriptorPath, isHandleAt } from '@trellis/sdk/internal';

/**
 * A folder inside the root, held open. Names in it are reached through the open descriptor
 * (`/proc/self/fd/<n>/<name>`), so swapping a folder above it for a symlink — between the
 * confinement check and the use — cannot redirect a lookup, open, create or rename out of the root.
 */
export interface OpenFolder {
  /** The absolute path the folder was opened at (for messages and results). */
  readonly real: string;
  /** A path that reaches the folder itself (for readdir). */
  readonly self: string;
  /** A path that reaches `name` inside the folder. */
  at(name: string): string;
  /** Facts about the open folder itself. */
  stat(): Promise<Stats>;
  close(): Promise<void>;
}

const FOLDER_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/** The refusal for a path that changed between the check and the use; the caller may simply try again. */
export function changedWhileOpening(argument: string, display: string): ToolError {
  return new ToolError(
    ERROR_CODES.PATH_NOT_ALLOWED,
    `${argument}: "${display}" changed while it was being opened (a folder on the way was moved or replaced by a symlink), so core-fs stopped rather than follow it; try again.`,
    { retryable: true },
  );
}

/** Maps an errno from opening a folder inside the root to a clean refusal. */
function folderOpenError(error: unknown, argument: string, display: string): ToolError {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EACCES' || code === 'EPERM') {
    return new ToolError(ERROR_CODES.NOT_ALLOWED, `${argument}: the folder "${display}" cannot be opened: permission denied.`);
  }
  // The caller confined the path and saw the folder, so ENOENT (gone), ELOOP (now a symlink),
  // ENOTDIR (now a file, or a folder on the way is) and the rest all mean it changed since.
  return changedWhileOpening(argument, display);
}

function anchored(handle: FileHandle, real: string, anchor: string | null): OpenFolder {
  const base = anchor ?? real;
  return {
    real,
    self: base,
    at: (name) => (anchor === null ? join(real, name) : `${anchor}/${name}`),
    stat: () => handle.stat(),
    close: () => handle.close(),
  };
}

/**
 * Opens the folder at the absolute, symlink-free path `real` (as confinePath returned it) and checks
 * that what was opened is the folder at that path, which lies inside the root; anything else is
 * refused as changed while opening.
 */
export async function openFolder(options: { real: string; display: string; argument: string }): Promise<OpenFolder> {
  const { real, display, argument } = options;
  let handle: FileHandle;
  try {
    handle = await open(real, FOLDER_FLAGS);
  } catch (error) {
    throw folderOpenError(error, argument, display);
  }
  try {
    if (!(await isHandleAt(handle, real))) throw changedWhileOpening(argument, display);
    return anchored(handle, real, await descriptorPath(handle));
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/**
 * Opens the folder `name` inside an open folder, never following a symlink: it is inside the
 * root because its parent is. Without descriptor paths the result is checked like openFolder's.
 */
export async function openFolderIn(parent: OpenFolder, name: string, options: { display: string; argument: string }): Promise<OpenFolder> {
  const real = join(parent.real, name);
  let handle: FileHandle;
  try {
    handle = await open(parent.at(name), FOLDER_FLAGS);
  } catch (error) {
    throw folderOpenError(error, options.argument, options.display);
  }
  try {
    const anchor = await descriptorPath(handle);
    if (anchor === null && !(await isHandleAt(handle, real))) throw changedWhileOpening(options.argument, options.display);
    return anchored(handle, real, anchor);
  } catch (error) {
    await handle.close();
    throw error;
  }
}
