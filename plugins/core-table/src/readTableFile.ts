import { constants } from 'node:fs';
import { lstat, open, realpath } from 'node:fs/promises';
import { join, relative, resolve, sep } from 'node:path';
import { ERROR_CODES, ToolError } from '@trellis/sdk';
import { isHandleAt, isPathInside } from '@trellis/sdk/internal';

/** Longest path argument accepted, in characters. */
export const MAX_PATH_CHARS = 4096;

/** A table file read from inside the root. */
export interface TableFile {
  /** Absolute real path. */
  readonly realPath: string;
  /** The path relative to the root, `/`-separated, for messages and results. */
  readonly displayPath: string;
  readonly bytes: Buffer;
}

function notAllowed(path: string, why: string): ToolError {
  return new ToolError(ERROR_CODES.PATH_NOT_ALLOWED, `path: "${path}" ${why}`);
}

/** The real path of the configured root; refuses a root that does not exist. */
export async function resolveRoot(options: { workspaceRoot: string; root: string }): Promise<string> {
  const configured = resolve(options.workspaceRoot, options.root);
  try {
    return await realpath(configured);
  } catch {
    throw new ToolError(
      ERROR_CODES.NOT_FOUND,
      `The table root ${configured} does not exist; fix [runtime.tools.table] root (relative paths resolve against the workspace).`,
    );
  }
}

/**
 * Resolves `path` against the root and refuses anything that leaves it: `..`, absolute paths
 * outside it, and symlinks (in any component) whose target is outside it. Returns the real path.
 */
export async function resolveInsideRoot(options: { rootReal: string; path: string }): Promise<{ realPath: string; displayPath: string }> {
  const { rootReal, path } = options;
  if (path.includes('\0')) throw notAllowed(path.replaceAll('\0', '\\0'), 'contains a NUL byte; give a plain file path.');
  if (path.length > MAX_PATH_CHARS) throw notAllowed(`${path.slice(0, 40)}…`, `is longer than ${MAX_PATH_CHARS} characters.`);
  const lexical = resolve(rootReal, path);
  if (!isPathInside(rootReal, lexical)) {
    throw notAllowed(path, `is outside the table root ${rootReal}; give a path inside it, relative to the root (e.g. "data/sales.csv").`);
  }
  // Walk component by component so the message can name the symlink that leaves the root.
  const parts = relative(rootReal, lexical)
    .split(sep)
    .filter((p) => p !== '');
  let current = rootReal;
  for (const [i, part] of parts.entries()) {
    const next = join(current, part);
    let info;
    try {
      info = await lstat(next);
    } catch {
      const shown = parts.slice(0, i + 1).join('/');
      throw new ToolError(
        ERROR_CODES.NOT_FOUND,
        `path: "${path}" does not exist (no "${shown}" under the table root); check the name, e.g. with core-fs.list.`,
      );
    }
    if (info.isSymbolicLink()) {
      const target = await realpath(next).catch(() => null);
      if (target === null || !isPathInside(rootReal, target)) {
        throw notAllowed(
          path,
          `goes through the symlink "${parts.slice(0, i + 1).join('/')}", which points outside the table root; only files inside the root can be read.`,
        );
      }
      current = target;
    } else {
      current = next;
    }
  }
  return { realPath: current, displayPath: relative(rootReal, current).split(sep).join('/') || '.' };
}

/**
 * Opens and reads a table file confined to the root: no symlink out, no hard link, a regular file
 * (never a FIFO or device), at most `maxBytes`. The opened descriptor is re-checked, so a swap
 * between check and open is caught.
 */
export async function readTableFile(options: { rootReal: string; path: string; maxBytes: number }): Promise<TableFile> {
  const { rootReal, path, maxBytes } = options;
  const { realPath, displayPath } = await resolveInsideRoot({ rootReal, path });
  let handle;
  try {
    handle = await open(realPath, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw notAllowed(path, 'was replaced by a symlink while being opened; try again.');
    if (code === 'EACCES' || code === 'EPERM') {
      throw new ToolError(ERROR_CODES.NOT_ALLOWED, `path: "${path}" cannot be read: the host user has no permission (${code}).`);
    }
    throw new ToolError(ERROR_CODES.NOT_FOUND, `path: "${path}" cannot be opened (${code ?? 'error'}).`);
  }
  try {
    const info = await handle.stat();
    if (info.isDirectory()) {
      throw new ToolError(ERROR_CODES.INVALID_ARGUMENT, `path: "${path}" is a folder; give a CSV, TSV, JSON or JSONL file inside it.`);
    }
    if (!info.isFile()) {
      throw new ToolError(
        ERROR_CODES.INVALID_ARGUMENT,
        `path: "${path}" is not a regular file (a FIFO, socket or device); only regular files can be read.`,
      );
    }
    if (info.nlink > 1) {
      throw notAllowed(
        path,
        `is a hard link (${info.nlink} names for one file), which may expose a file from outside the table root; copy the file instead of linking it.`,
      );
    }
    // What was opened must be the file at the checked path: a folder on the way swapped for a
    // symlink between the check and the open is caught here.
    if (!(await isHandleAt(handle, realPath))) {
      throw new ToolError(
        ERROR_CODES.PATH_NOT_ALLOWED,
        `path: "${path}" changed while being opened (a folder on the way was moved or replaced by a symlink); try again.`,
        {
          retryable: true,
        },
      );
    }
    if (info.size > maxBytes) {
      throw new ToolError(
        ERROR_CODES.TOO_LARGE,
        `path: "${path}" is ${info.size} bytes, more than max_bytes = ${maxBytes} in [runtime.tools.table]; use a smaller extract or raise the limit.`,
      );
    }
    const buffer = Buffer.alloc(Math.min(info.size, maxBytes) + 1);
    let filled = 0;
    while (filled < buffer.length) {
      const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    if (filled > maxBytes) {
      throw new ToolError(
        ERROR_CODES.TOO_LARGE,
        `path: "${path}" grew past max_bytes = ${maxBytes} while being read; use a smaller extract or raise [runtime.tools.table] max_bytes.`,
      );
    }
    return { realPath, displayPath, bytes: buffer.subarray(0, filled) };
  } finally {
    await handle.close();
  }
}
