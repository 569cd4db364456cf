import { lstatSync, readdirSync, statSync } from 'node:fs';
import type { Dirent, Stats } from 'node:fs';
import type { RootReadMemo } from './ManifestReadMemo.ts';
import type { ManifestReader, ReadOutcome } from './readManifestFile.ts';
import { errnoOf, toStatFacts } from './statFacts.ts';
import { runSteps, type Steps } from '@trellis/sdk/internal';
import type { ReadRefusal, StatFacts } from './types.ts';

/** The manifest file name discovery looks for. */
export const MANIFEST_FILE_NAME = 'plugin.toml';

/** Plugin folders sit at most this many levels below their root (`root/a/b/c/d/plugin.toml`). */
export const MAX_PLUGIN_DEPTH = 4;

/** Folders the walk never enters: these names, and any name ending in `.disabled`. */
export const IGNORED_FOLDER_NAMES: readonly string[] = ['node_modules', '.git'];
const IGNORED: ReadonlySet<string> = new Set(IGNORED_FOLDER_NAMES);
const DISABLED_SUFFIX = '.disabled';

/** A `plugin.toml` the walk found. */
export interface WalkEntry {
  /** Its path below the root. */
  readonly rel: string;
  /**
   * The walk's lstat and read of it by the root's realpath (opened O_NOFOLLOW|O_NONBLOCK, or
   * refused by type without opening); null for a symlink or a file it could not open: then the
   * candidate takes the full path, lstat first.
   */
  readonly read: ReadOutcome | null;
  /** The walk reached it through a symlinked folder: its realpath is not the root's plus `rel`. */
  readonly linked: boolean;
}

/**
 * Every `plugin.toml` in the folders at most {@link MAX_PLUGIN_DEPTH} levels below `rootReal`,
 * whatever its type (a FIFO, a folder or a symlink named so is reported, for admission to refuse
 * with a reason).
 *
 * A folder that holds a `plugin.toml` is a plugin folder, and the walk does not look inside it:
 * a plugin's own test fixtures and examples are not plugins. Every other folder is listed with
 * `readdir` and its subfolders are walked, level by level: hidden ones too, but not
 * `node_modules`, `.git` or `*.disabled`. A symlink to a folder is followed (one `stat`) unless
 * it leads to the root or to a folder a link has already led into: a loop is walked once, not
 * down to the depth limit along every path, and a manifest reached both directly and through a
 * link is one candidate with an alias (the realpath dedupe). A folder that cannot be read is
 * skipped, as a missing one is.
 *
 * Each folder is first asked for its manifest directly: one `lstat`, which fails with ENOENT
 * for the folders in between and, in a plugin folder, says what the manifest is before anything
 * opens it (a FIFO or a device is refused by type, never opened); a regular file is then opened
 * and read at once (see {@link ManifestReader}). A plugin folder is never listed, so a plugin costs
 * `lstat`, `open`, `fstat`, `read` and `close` instead of a `readdir` (five calls) plus those.
 * This is a fixed name at bounded depth, which needs none of a glob library's pattern machinery;
 * see docs/decisions/0001-discovery-walk-and-toml-fast-path.md for the measurements. With a
 * `memo` (a live host's), a manifest on the root's device whose `lstat` says it is untouched since
 * an earlier run read it is not opened again: that read is taken over (see `ManifestReadMemo`).
 */
export function walkPluginRoot(
  rootReal: string,
  reader: ManifestReader,
  memo?: RootReadMemo,
): { readonly entries: WalkEntry[]; readonly problem: string | null } {
  return runSteps(walkPluginRootSteps(rootReal, reader, memo));
}

/** {@link walkPluginRoot}, pausable after every folder visited (see `Steps`). */
export function* walkPluginRootSteps(
  rootReal: string,
  reader: ManifestReader,
  memo?: RootReadMemo,
): Steps<{ readonly entries: WalkEntry[]; readonly problem: string | null }> {
  const out: WalkEntry[] = [];
  // Folders to visit, level by level: `dir` ends with a slash, so children are `dir + name`.
  const queue: Array<{ readonly dir: string; readonly rel: string; readonly depth: number; readonly linked: boolean }> = [
    { dir: rootReal.endsWith('/') ? rootReal : `${rootReal}/`, rel: '', depth: 0, linked: false },
  ];
  // The folders a symlink has led into (device and inode, exact as bigints), the root among them:
  // each is entered through a link at most once, so links fanning out into loops cost one visit
  // per folder, not one per path (30 links to "." would otherwise be 30^4 paths).
  const entered = new Set<string>();
  const identity = (path: string): string | null => {
    try {
      const stat = statSync(path, { bigint: true });
      return stat.isDirectory() ? `${stat.dev}:${stat.ino}` : null;
    } catch {
      return null;
    }
  };
  const rootIdentity = identity(rootReal);
  if (rootIdentity !== null) entered.add(rootIdentity);
  const uid = typeof process.getuid === 'function' ? process.getuid() : null;
  // Why the root itself could not be walked (it exists: resolveRoot saw to that).
  let problem: string | null = null;
  for (let head = 0; head < queue.length; head += 1) {
    if (head > 0) yield;
    const { dir, rel, depth, linked } = queue[head]!;
    const manifest = dir + MANIFEST_FILE_NAME;
    let lstat: StatFacts | null = null;
    let stats: Stats | undefined;
    try {
      stats = lstatSync(manifest);
      lstat = toStatFacts(stats);
    } catch (error) {
      const errno = errnoOf(error);
      if (errno !== 'ENOENT') {
        // The folder may be listed but not searched (no x bit): nothing below it can be
        // reached, but a manifest it lists is reported, refused with the reason.
        if (depth === 0) problem ??= errno;
        if (lists(dir, MANIFEST_FILE_NAME)) {
          const refusal: ReadRefusal = {
            kind: 'OPEN_FAILED',
            message: `cannot stat it (${errno}): its folder cannot be searched by this user`,
          };
          out.push({ rel: rel + MANIFEST_FILE_NAME, read: { lstat: null, stat: null, bytes: null, refusal }, linked });
        }
        continue;
      }
    }
    if (lstat !== null) {
      // A manifest. Through a linked folder, or itself a link, it takes the full path later
      // (realpath first, one read per real file however many paths lead to it). Anything else
      // that is not a regular file is refused by its lstat, never opened. A regular file is
      // opened and read now (a swap in between is caught by the open or the fstat).
      let read: ReadOutcome | null = null;
      if (!linked && lstat.type !== 'symlink') {
        const outcome =
          memo !== undefined && stats !== undefined && stats.dev === memo.device
            ? reader.readRemembered(manifest, lstat, stats, memo.memo)
            : reader.readByType(manifest, lstat);
        // An open that failed (a swap, no permission) leaves it to the full path.
        read = typeof outcome === 'string' ? null : outcome;
      }
      out.push({ rel: rel + MANIFEST_FILE_NAME, read, linked });
      // A plugin folder is not entered, when its manifest is a regular file of yours or root's.
      // Anything else there (a folder or a link named plugin.toml, a file another user put in a
      // shared folder) is reported for admission to refuse, and the folder is walked as any
      // other, so it cannot hide the plugins next to it.
      if (lstat.type === 'file' && (uid === null || lstat.uid === uid || lstat.uid === 0)) continue;
    }
    if (depth >= MAX_PLUGIN_DEPTH) continue;
    let dirents: Dirent[];
    try {
      dirents = readdirSync(dir, { withFileTypes: true });
    } catch (error) {
      if (depth === 0) problem ??= errnoOf(error);
      continue;
    }
    // By name, so which of several links into one folder is followed does not depend on the
    // order the file system lists them in: the shallowest, then the first by name.
    dirents.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (let i = 0; i < dirents.length; i += 1) {
      const dirent = dirents[i]!;
      const name = dirent.name;
      // The manifest's own name was looked at above, whatever it is (even a folder or a link to one).
      if (name === MANIFEST_FILE_NAME || IGNORED.has(name) || name.endsWith(DISABLED_SUFFIX)) continue;
      if (dirent.isDirectory()) queue.push({ dir: `${dir}${name}/`, rel: `${rel}${name}/`, depth: depth + 1, linked });
      else if (dirent.isSymbolicLink()) {
        const target = identity(dir + name);
        if (target === null || entered.has(target)) continue;
        entered.add(target);
        queue.push({ dir: `${dir}${name}/`, rel: `${rel}${name}/`, depth: depth + 1, linked: true });
      }
    }
  }
  return { entries: out, problem };
}

/** Whether `dir` lists an entry called `name` (false when it cannot be listed). */
function lists(dir: string, name: string): boolean {
  try {
    return readdirSync(dir).includes(name);
  } catch {
    return false;
  }
}
