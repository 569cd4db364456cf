import { lstat, readlink, realpath, stat } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { ERROR_CODES, ToolError } from '@trellis/sdk';
import { isPathInside } from '@trellis/sdk/internal';
import type { ToolContext } from '@trellis/sdk';
import type { FsSettings } from './FsSettingsSchema.ts';

/** Longest path accepted, in bytes (Linux PATH_MAX). */
export const MAX_PATH_BYTES = 4096;
/** Longest single file or folder name accepted, in bytes (NAME_MAX). */
export const MAX_NAME_BYTES = 255;
const MAX_SYMLINK_HOPS = 40;

/** The confinement root: as configured (absolute) and its realpath. */
export interface FsRoot {
  readonly configured: string;
  readonly real: string;
}

/** A path argument after confinement. */
export interface ConfinedPath {
  /** Absolute and free of symlinks: the existing part realpath'd, missing components appended. */
  readonly real: string;
  /** `real` relative to the root, with `/` separators; `.` for the root itself. */
  readonly display: string;
  /** Whether `real` exists. */
  readonly exists: boolean;
}

/** Formats an absolute path under the root as a root-relative display path. */
export function toDisplay(root: FsRoot, absolute: string): string {
  const rel = relative(root.real, absolute);
  return rel === '' ? '.' : rel.split(sep).join('/');
}

/** Resolves `[runtime.tools.fs] root` against the workspace and realpaths it. */
export async function resolveFsRoot(ctx: ToolContext<FsSettings>): Promise<FsRoot> {
  const configured = resolve(ctx.workspace.root, ctx.config.root);
  let real: string;
  try {
    real = await realpath(configured);
  } catch {
    throw new ToolError(
      ERROR_CODES.NOT_FOUND,
      `[runtime.tools.fs] root: "${configured}" does not exist. The operator must create it or set root to an existing folder in runtime.toml.`,
    );
  }
  if (
    !(await stat(real).then(
      (info) => info.isDirectory(),
      () => false,
    ))
  ) {
    throw new ToolError(
      ERROR_CODES.INVALID_ARGUMENT,
      `[runtime.tools.fs] root: "${configured}" is not a folder. The operator must point root at a folder.`,
    );
  }
  return { configured, real };
}

function refuse(message: string): ToolError {
  return new ToolError(ERROR_CODES.PATH_NOT_ALLOWED, message);
}

/** A path that changed while it was walked (a folder swapped for a symlink, say): refused, and the caller may try again. */
function changedWhileChecking(argument: string, display: string): ToolError {
  return new ToolError(
    ERROR_CODES.PATH_NOT_ALLOWED,
    `${argument}: "${display}" changed while it was being checked (a folder or symlink on the way was replaced), so core-fs stopped rather than follow it; try again.`,
    { retryable: true },
  );
}

/** Refuses NUL bytes and over-long paths or names before anything touches the file system. */
export function checkPathText(argument: string, value: string): void {
  if (value.includes('\0')) {
    throw refuse(`${argument}: contains a NUL byte, which no file name can hold. Pass the path as plain text, e.g. "src/index.ts".`);
  }
  const bytes = Buffer.byteLength(value, 'utf8');
  if (bytes > MAX_PATH_BYTES) {
    throw refuse(
      `${argument}: is ${bytes} bytes long; paths are limited to ${MAX_PATH_BYTES} bytes. Use a shorter path relative to the root.`,
    );
  }
  for (const name of value.split(/[\\/]/)) {
    const nameBytes = Buffer.byteLength(name, 'utf8');
    if (nameBytes > MAX_NAME_BYTES) {
      throw refuse(
        `${argument}: the name "${name.slice(0, 24)}…" is ${nameBytes} bytes long; a single file or folder name is limited to ${MAX_NAME_BYTES} bytes.`,
      );
    }
  }
}

interface Walked {
  readonly real: string;
  readonly exists: boolean;
  /** The last symlink followed, absolute, if any. */
  readonly lastLink: string | null;
}

/**
 * Walks `components` from `start` one name at a time, as the kernel would: each existing name is
 * lstat'ed, symlinks are expanded (readlink) and walked in turn, so the result is what the path
 * really names. Stops at the first name that does not exist.
 */
async function walkComponents(argument: string, display: string, start: string, components: readonly string[]): Promise<Walked> {
  let current = start;
  const queue = [...components];
  let hops = 0;
  let lastLink: string | null = null;
  while (queue.length > 0) {
    const name = queue.shift()!;
    if (name === '' || name === '.') continue;
    if (name === '..') {
      current = dirname(current);
      continue;
    }
    const next = join(current, name);
    let info;
    try {
      info = await lstat(next);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return { real: resolve(next, ...queue), exists: false, lastLink };
      if (code === 'EACCES') {
        throw new ToolError(ERROR_CODES.NOT_ALLOWED, `${argument}: "${display}" cannot be reached: permission denied on "${current}".`);
      }
      // ENOTDIR, ELOOP, …: a name checked a moment ago changed kind.
      throw changedWhileChecking(argument, display);
    }
    if (info.isSymbolicLink()) {
      hops += 1;
      if (hops > MAX_SYMLINK_HOPS) {
        throw refuse(
          `${argument}: "${display}" goes through more than ${MAX_SYMLINK_HOPS} symlinks (a loop?). Use a path without the symlink loop.`,
        );
      }
      // EINVAL: no longer a symlink; ENOENT: gone. Either way it changed under the walk.
      const target = await readlink(next).catch(() => {
        throw changedWhileChecking(argument, display);
      });
      lastLink = next;
      if (isAbsolute(target)) current = '/';
      queue.unshift(...target.split('/'));
      continue;
    }
    if (!info.isDirectory() && queue.some((c) => c !== '' && c !== '.')) {
      throw new ToolError(
        ERROR_CODES.NOT_FOUND,
        `${argument}: "${display}" treats "${next}" as a folder, but it is a file. Check the path with core-fs.list.`,
      );
    }
    current = next;
  }
  return { real: current, exists: true, lastLink };
}

/**
 * Confines a path argument to the root: refuses NUL bytes, over-long paths, `..` and absolute
 * paths that leave the root, and symlinks (anywhere on the way) that lead out of it. Relative
 * paths resolve against the root; absolute ones must lie inside it. For a path that does not
 * exist yet, its deepest existing parent is resolved and the missing names are appended.
 */
export async function confinePath(root: FsRoot, argument: string, value: string): Promise<ConfinedPath> {
  checkPathText(argument, value);
  let rel: string;
  if (isAbsolute(value)) {
    const lexical = resolve(value);
    if (isPathInside(root.real, lexical)) rel = relative(root.real, lexical);
    else if (isPathInside(root.configured, lexical)) rel = relative(root.configured, lexical);
    else {
      throw refuse(
        `${argument}: "${value}" is an absolute path outside the root "${root.real}". Use a path relative to the root instead, e.g. "src/index.ts".`,
      );
    }
  } else {
    const lexical = resolve(root.real, value);
    if (!isPathInside(root.real, lexical)) {
      throw refuse(
        `${argument}: "${value}" leaves the root "${root.real}" (it resolves to "${lexical}"). Use a path inside the root; ".." may not climb above it.`,
      );
    }
    rel = relative(root.real, lexical);
  }
  const walked = await walkComponents(argument, value, root.real, rel === '' ? [] : rel.split(sep));
  if (!isPathInside(root.real, walked.real)) {
    const link = walked.lastLink;
    const via = link === null ? '' : ` through the symlink "${isPathInside(root.real, link) ? toDisplay(root, link) : link}"`;
    throw refuse(
      `${argument}: "${value}" leads${via} to "${walked.real}", outside the root "${root.real}". Symlinks are only followed while they stay inside the root; use a path that does not go through it.`,
    );
  }
  return { real: walked.real, display: toDisplay(root, walked.real), exists: walked.exists };
}
