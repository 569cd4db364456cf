import type { Stats } from 'node:fs';

/**
 * What a file system entry is, for messages ("… is a FIFO (named pipe), not a regular file"): one
 * wording for the config loader and the file tools. Give it `lstat` results to name symlinks.
 */
export function describeFileKind(stats: Stats): string {
  if (stats.isFile()) return 'a regular file';
  if (stats.isDirectory()) return 'a folder';
  if (stats.isSymbolicLink()) return 'a symlink';
  if (stats.isSocket()) return 'a socket';
  if (stats.isFIFO()) return 'a FIFO (named pipe)';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  return 'an unknown kind of file';
}
