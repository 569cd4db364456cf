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
