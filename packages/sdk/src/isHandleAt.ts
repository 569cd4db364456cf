import { access, readlink, realpath, stat } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';

let procFd: Promise<boolean> | undefined;

/** Whether this system names open descriptors under `/proc/self/fd` (Linux with /proc mounted). Checked once. */
export function hasDescriptorPaths(): Promise<boolean> {
  procFd ??= access('/proc/self/fd').then(
    () => true,
    () => false,
  );
  return procFd;
}

/**
 * A path that reaches the open folder `handle` itself, whatever has happened to the path it was
 * opened by: `/proc/self/fd/<n>` where the system has descriptor paths, else `null`. The kernel
 * resolves `<anchor>/<name>` inside the opened folder, so no folder above it can be swapped under
 * a lookup (an `openat` for Node, which has none).
 */
export async function descriptorPath(handle: FileHandle): Promise<string | null> {
  return (await hasDescriptorPaths()) ? `/proc/self/fd/${handle.fd}` : null;
}

/**
 * True when the open `handle` is the file or folder found at the absolute, symlink-free `path`
 * right now: the check that turns "the path was confined, then opened" into "what was opened is
 * inside", closing the race where a folder on the way is swapped for a symlink between the two.
 *
 * With `/proc/self/fd` the kernel's own name for the descriptor must equal `path` (a deleted or
 * moved file does not). Without it, the descriptor and `path` must be the same device and inode
 * and `path` must still resolve to itself, which narrows the window but cannot close it.
 */
export async function isHandleAt(handle: FileHandle, path: string): Promise<boolean> {
  if (await hasDescriptorPaths()) {
    const opened = await readlink(`/proc/self/fd/${handle.fd}`).catch(() => null);
    return opened === path;
  }
  const [opened, named, real] = await Promise.all([handle.stat(), stat(path).catch(() => null), realpath(path).catch(() => null)]);
  return named !== null && real === path && opened.dev === named.dev && opened.ino === named.ino;
}
