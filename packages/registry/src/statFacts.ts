import { lstatSync } from 'node:fs';
import type { Stats } from 'node:fs';
import type { FileType, StatFacts } from './types.ts';

/** Converts `Stats` to the plain facts admission reads. */
export function toStatFacts(stats: Stats): StatFacts {
  return {
    type: fileTypeOf(stats),
    mode: stats.mode,
    uid: stats.uid,
    gid: stats.gid,
    nlink: stats.nlink,
    size: stats.size,
    dev: stats.dev,
    ino: stats.ino,
  };
}

function fileTypeOf(stats: Stats): FileType {
  if (stats.isFile()) return 'file';
  if (stats.isDirectory()) return 'directory';
  if (stats.isSymbolicLink()) return 'symlink';
  if (stats.isFIFO()) return 'fifo';
  if (stats.isSocket()) return 'socket';
  if (stats.isCharacterDevice()) return 'char-device';
  if (stats.isBlockDevice()) return 'block-device';
  return 'unknown';
}

/** The errno code of a failed file-system call (`ENOENT`, `EACCES`, …). */
export function errnoOf(error: unknown): string {
  return typeof error === 'object' && error !== null && 'code' in error ? String((error as { code: unknown }).code) : 'EUNKNOWN';
}

/** `lstat` facts of a path, or null when it cannot be stat'ed. */
export function lstatFacts(path: string): StatFacts | null {
  try {
    return toStatFacts(lstatSync(path));
  } catch {
    return null;
  }
}

/** An `lstat` that asks the file system once per path, for one discovery run. */
export function createLstatCache(): (path: string) => StatFacts | null {
  const cache = new Map<string, StatFacts | null>();
  return (path) => {
    let facts = cache.get(path);
    if (facts === undefined) {
      facts = lstatFacts(path);
      cache.set(path, facts);
    }
    return facts;
  };
}

/** Whether two stat facts are one file in one state (same device, inode, type, mode, owner, links and size). */
export function sameStat(a: StatFacts | null, b: StatFacts | null): boolean {
  if (a === null || b === null) return a === b;
  return (
    a.type === b.type &&
    a.mode === b.mode &&
    a.uid === b.uid &&
    a.gid === b.gid &&
    a.nlink === b.nlink &&
    a.size === b.size &&
    a.dev === b.dev &&
    a.ino === b.ino
  );
}
