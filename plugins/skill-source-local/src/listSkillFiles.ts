import { readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** Files listed per skill by `read`. */
export const MAX_LISTED_FILES = 200;
/** Folder depth `read` descends into. */
export const MAX_LISTED_DEPTH = 6;

/**
 * The files of a skill folder as relative `/`-separated paths, sorted, breadth first, at most
 * `MAX_LISTED_FILES`. Symbolic links are listed but never followed; hidden entries are skipped.
 */
export async function listSkillFiles(dir: string): Promise<{ files: string[]; truncated: boolean }> {
  const files: string[] = [];
  let queue: Array<{ abs: string; rel: string; depth: number }> = [{ abs: dir, rel: '', depth: 0 }];
  let truncated = false;
  while (queue.length > 0) {
    const next: typeof queue = [];
    for (const folder of queue) {
      let entries;
      try {
        entries = await readdir(folder.abs, { withFileTypes: true });
      } catch {
        continue;
      }
      entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      for (const entry of entries) {
        if (entry.name.startsWith('.')) continue;
        const rel = folder.rel === '' ? entry.name : `${folder.rel}/${entry.name}`;
        if (entry.isDirectory()) {
          if (folder.depth + 1 < MAX_LISTED_DEPTH) next.push({ abs: join(folder.abs, entry.name), rel, depth: folder.depth + 1 });
          else truncated = true;
          continue;
        }
        if (files.length >= MAX_LISTED_FILES) {
          truncated = true;
          continue;
        }
        files.push(rel);
      }
    }
    queue = next;
  }
  return { files, truncated };
}
