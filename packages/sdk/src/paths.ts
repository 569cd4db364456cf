import { isAbsolute, relative, resolve, sep } from 'node:path';

/**
 * True when `child` is `parent` or lies below it, compared component by component on already
 * resolved (realpath'd) absolute paths: `/r/ab` is not inside `/r/a`, and a folder named `..foo`
 * is an ordinary name.
 */
export function isPathInside(parent: string, child: string): boolean {
  const rel = relative(resolve(parent), resolve(child));
  if (rel === '') return true;
  if (isAbsolute(rel)) return false;
  const first = rel.split(sep, 1)[0];
  return first !== '..';
}

/** Octal permission bits as `ls` users read them, e.g. `0o777` → `"777"`, with setuid/setgid/sticky when present. */
export function formatMode(mode: number): string {
  return (mode & 0o7777).toString(8).padStart(3, '0');
}

/** True when the mode lets every user write (the `o+w` bit). */
export function isWorldWritable(mode: number): boolean {
  return (mode & 0o002) !== 0;
}

/**
 * True when a folder lets someone other than its owner change what it holds: the `o+w` bit is
 * set, unless the folder is sticky AND owned by root (like `/tmp`): there the sticky bit stops
 * other users from renaming or deleting entries they do not own, and only root, whom we trust
 * anyway, could lift it. A sticky folder owned by another user is unsafe: its owner can still
 * swap entries. Shared by plugin admission (registry) and config-file admission (config).
 */
export function isUnsafeFolderMode(mode: number, uid: number): boolean {
  if (!isWorldWritable(mode)) return false;
  return !((mode & 0o1000) !== 0 && uid === 0);
}
