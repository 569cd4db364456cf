import { statfsSync, statSync, type Stats } from 'node:fs';
import { ownBytes, type ReadOutcome } from './readManifestFile.ts';
import { sameStat } from './statFacts.ts';
import type { StatFacts } from './types.ts';

/**
 * How long a manifest must have been left alone (its ctime and mtime this far before it was
 * read) for a later run to take its read over. A file changed just before it was read may be
 * changed again within the same tick of the file system's clock and keep its timestamps: the
 * kernel stamps files from a coarse clock, and FAT keeps mtimes to 2 s. Such a file is read
 * again on every run until it has settled.
 */
export const SETTLED_MS = 2000;

/**
 * File systems whose `lstat` is authoritative (`statfs` f_type, Linux): local ones. On a network
 * file system `lstat` may answer from a client-side attribute cache for up to a minute, while
 * `open` revalidates: there a manifest is always opened and read.
 */
const LOCAL_FILE_SYSTEMS = new Set([
  0xef53, // ext2, ext3, ext4
  0x58465342, // xfs
  0x9123683e, // btrfs
  0x01021994, // tmpfs
  0x794c7630, // overlayfs
  0x2fc12fc1, // zfs
  0xf2f52010, // f2fs
]);

/**
 * What earlier discovery runs of one long-running host read, by manifest path: a run finds a
 * manifest whose `lstat` is the very same as when it was read (device, inode, size, mode, owner,
 * links, ctime and mtime) and takes that read over instead of opening the file again. A
 * `write()`, `chmod`, `chown`, link or rename changes the ctime, which no user can set back;
 * admission still judges the `lstat` of now. A write through a shared memory map can leave the
 * times as they were (the kernel stamps a page's first write only), and no watcher hears it
 * either: a reload the user asks for (SIGHUP, `reload()`) calls {@link ManifestReadMemo.clear}
 * first. Held by a live host's `RegistryBuildCache`; a one-shot run has none.
 */
export interface ManifestReadMemo {
  /**
   * The read of `path` an earlier run made, when `lstat` (the walk's, of now) and the times of
   * `stats` (the same call's) say the file is the same and untouched since.
   */
  lookup(path: string, lstat: StatFacts, stats: Stats): ReadOutcome | undefined;
  /**
   * Remembers a read that succeeded of the file `lstat` and `stats` describe; `startedAt` is
   * `now()` taken before it was opened. Returns the outcome to use: the same, with bytes of its
   * own when it was kept.
   */
  remember(path: string, lstat: StatFacts, stats: Stats, outcome: ReadOutcome, startedAt: number): ReadOutcome;
  /** The clock reads are timed with (ms since the epoch, the clock file times are stamped with). */
  now(): number;
  /** Ends a discovery run: reads of paths it did not reach are forgotten. */
  endRun(): void;
  /** Forgets every read: the next run opens every manifest (a reload the user asked for). */
  clear(): void;
}

interface Remembered {
  readonly lstat: StatFacts;
  readonly ctimeMs: number;
  readonly mtimeMs: number;
  readonly outcome: ReadOutcome;
  run: number;
}

/** A memo for a live host's discovery runs; `now` is for tests. */
export function createManifestReadMemo(options: { readonly now?: () => number } = {}): ManifestReadMemo {
  const now = options.now ?? Date.now;
  const reads = new Map<string, Remembered>();
  let run = 0;
  return {
    lookup(path, lstat, stats) {
      const known = reads.get(path);
      if (known === undefined) return undefined;
      known.run = run;
      const same = known.ctimeMs === stats.ctimeMs && known.mtimeMs === stats.mtimeMs && sameStat(known.lstat, lstat);
      return same ? known.outcome : undefined;
    },
    remember(path, lstat, stats, outcome, startedAt) {
      reads.delete(path);
      const opened = outcome.stat;
      if (outcome.bytes === null || outcome.refusal !== null || opened === null) return outcome;
      // Only a read of the very file the lstat described: a folder on the path swapped between
      // the lstat and the open reads another file, whose bytes must not be kept under this one's
      // identity (swapping the folder back would not change this file's ctime).
      if (!sameStat(opened, lstat)) return outcome;
      // Changed too recently to tell a later change in the same clock tick apart: not kept.
      if (stats.ctimeMs > startedAt - SETTLED_MS || stats.mtimeMs > startedAt - SETTLED_MS) return outcome;
      const kept: ReadOutcome = { ...outcome, bytes: ownBytes(outcome.bytes) };
      reads.set(path, { lstat, ctimeMs: stats.ctimeMs, mtimeMs: stats.mtimeMs, outcome: kept, run });
      return kept;
    },
    now,
    endRun() {
      for (const [path, known] of reads) if (known.run !== run) reads.delete(path);
      run += 1;
    },
    clear() {
      reads.clear();
    },
  };
}

/** Whether reads under `path` may be taken over by `lstat` (a local file system on Linux); false when unknown. */
export function memoizableFileSystem(path: string): boolean {
  if (process.platform !== 'linux') return false;
  try {
    return LOCAL_FILE_SYSTEMS.has(Number(statfsSync(path).type));
  } catch {
    return false;
  }
}

/**
 * The memo as one root's walk uses it: only for files on the root's own device, the file system
 * {@link memoizableFileSystem} vouched for (a network share mounted inside a local root is read
 * every time). Undefined when the root's file system is not one it trusts.
 */
export interface RootReadMemo {
  readonly memo: ManifestReadMemo;
  /** `st_dev` of the root. */
  readonly device: number;
}

/** `memo` scoped to the root at `rootReal`, or undefined when its file system is not one the memo trusts. */
export function rootReadMemo(memo: ManifestReadMemo, rootReal: string): RootReadMemo | undefined {
  if (!memoizableFileSystem(rootReal)) return undefined;
  try {
    return { memo, device: statSync(rootReal).dev };
  } catch {
    return undefined;
  }
}
