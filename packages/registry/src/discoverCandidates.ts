import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, readdirSync, realpathSync, statSync } from 'node:fs';
import type { Dirent, Stats } from 'node:fs';
import { basename, dirname, join, sep } from 'node:path';
import { ERROR_CODES, MAX_MANIFEST_BYTES } from '@trellis/sdk';
import { containsPath } from './containsPath.ts';
import type { BundledPluginDescriptor } from '@trellis/sdk';
import { BUNDLED_ROOT } from './resolveDiscoveryRoots.ts';
import type {
  BundledCandidateFacts,
  CandidateFacts,
  DiscoveryResult,
  ExternalCandidateFacts,
  FileRootSpec,
  FileType,
  FolderFacts,
  ReadRefusal,
  Reason,
  RootSpec,
  StatFacts,
} from './types.ts';

/** The manifest file name discovery looks for. */
export const MANIFEST_FILE_NAME = 'plugin.toml';

/** Plugin folders sit at most this many levels below their root (`root/a/b/c/d/plugin.toml`). */
export const MAX_PLUGIN_DEPTH = 4;

/** Folders the walk never enters: these names, and any name ending in `.disabled`. */
export const IGNORED_FOLDER_NAMES: readonly string[] = ['node_modules', '.git'];
const IGNORED: ReadonlySet<string> = new Set(IGNORED_FOLDER_NAMES);
const DISABLED_SUFFIX = '.disabled';

/** Inputs of {@link discoverCandidates}. */
export interface DiscoverCandidatesOptions {
  /** From `resolveDiscoveryRoots`; the bundled root (if present) is served from `bundled`. */
  readonly roots: readonly RootSpec[];
  /** The compiled-in descriptors (root 4); no file is read for them. */
  readonly bundled: readonly BundledPluginDescriptor[];
}

// O_NOFOLLOW and O_NONBLOCK are POSIX; on a platform without them the flags are 0 and the
// fstat check on the handle still refuses anything that is not a regular file.
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/**
 * A stat number as a small integer when it is one. `Stats` fields come out of a Float64Array, and
 * kept as they are, V8 boxes each one in a heap number of its own: five per fact, two facts per
 * candidate. `| 0` gives the same value as an integer V8 stores inline.
 */
const small = (n: number): number => (n >= 0 && n <= 0x3fffffff ? n | 0 : n);

/** Converts `Stats` to plain facts. */
export function toStatFacts(stats: Stats): StatFacts {
  return {
    type: fileTypeOf(stats),
    mode: small(stats.mode),
    uid: small(stats.uid),
    gid: small(stats.gid),
    nlink: small(stats.nlink),
    size: small(stats.size),
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

function errnoOf(error: unknown): string {
  return typeof error === 'object' && error !== null && 'code' in error ? String((error as { code: unknown }).code) : 'EUNKNOWN';
}

interface Found {
  readonly rel: string;
  readonly logical: string;
  readonly real: string | null;
  /** What paths to one manifest share: its realpath, or for a dangling link its folder's realpath and name. */
  readonly key: string | null;
  /** Why the realpath failed, when it did (ENOENT, ELOOP, …). */
  readonly unresolved?: string;
  readonly direct: boolean;
  /** `lstat` of the manifest path when the fast path took it (a regular file, no symlink on the way). */
  readonly lstat: StatFacts | null;
  readonly depth: number;
  /** The read, when the walk already made it (the common case: see `findManifests`). */
  readonly read: ReadOutcome | null;
}

function lstatUncached(path: string): StatFacts | null {
  try {
    return toStatFacts(lstatSync(path));
  } catch {
    return null;
  }
}

/** A `plugin.toml` the walk found. */
interface WalkEntry {
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
 * and read at once (see {@link readOpened}). A plugin folder is never listed, so a plugin costs
 * `lstat`, `open`, `fstat`, `read` and `close` instead of a `readdir` (five calls) plus those.
 * This is a fixed name at bounded depth, which needs none of a glob library's pattern machinery;
 * see docs/architecture.md, "Discovery at scale", for the measurements.
 */
function findManifests(rootReal: string): { readonly entries: WalkEntry[]; readonly problem: string | null } {
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
    const { dir, rel, depth, linked } = queue[head]!;
    const manifest = dir + MANIFEST_FILE_NAME;
    let lstat: StatFacts | null = null;
    try {
      lstat = toStatFacts(lstatSync(manifest));
    } catch (error) {
      const errno = errnoOf(error);
      if (errno !== 'ENOENT') {
        // The folder may be listed but not searched (no x bit): nothing below it can be
        // reached, but a manifest it lists is reported, refused with the reason.
        if (depth === 0) problem ??= errno;
        if (lists(dir, MANIFEST_FILE_NAME)) {
          const refusal: ReadRefusal = { kind: 'OPEN_FAILED', message: `cannot stat it (${errno}): its folder cannot be searched by this user` };
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
        const outcome = readByType(manifest, lstat);
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

/**
 * What `join(base, rel)` returns, as a prefix to concatenate `rel` to, for a `rel` whose segments
 * are plain names (no `.`, `..` or empty segment, as the walk yields them): one normalization per
 * root instead of one per manifest.
 */
function joinPrefix(base: string): string {
  return join(base, '_').slice(0, -1);
}

/**
 * True when every folder of `logical` (= prefix + rel) between the root and the manifest is a
 * folder, not a symlink. The folders are prefixes of `logical`: slices, no path joining.
 */
function foldersAreReal(logical: string, prefixLength: number, lstatCached: (path: string) => StatFacts | null): boolean {
  for (let slash = logical.indexOf('/', prefixLength); slash !== -1; slash = logical.indexOf('/', slash + 1)) {
    if (lstatCached(logical.slice(0, slash))?.type !== 'directory') return false;
  }
  return true;
}

/**
 * Finds every `plugin.toml` under the file roots and records plain facts about each (paths,
 * realpaths, stat facts of the manifest and of every folder up to the root, symlinks on the way,
 * the bytes). All of the registry's filesystem I/O happens here, synchronously (cheaper than
 * thousands of small async calls). Symlinked folders and manifests are followed and reported; a
 * manifest reached twice within one root (symlink twins, loops) is one candidate, found by
 * realpath, with the other paths kept as `aliases`. Only regular files are read: the realpath is opened with
 * O_NOFOLLOW|O_NONBLOCK, the handle is `fstat`ed and anything else is refused, and at most
 * 256 KiB + 1 byte is read. Missing explicit/env roots are `ROOT_MISSING` warnings.
 */
export function discoverCandidates(options: DiscoverCandidatesOptions): DiscoveryResult {
  const warnings: Reason[] = [];
  const candidates: CandidateFacts[] = [];
  const lstatCache = new Map<string, StatFacts | null>();
  const lstatCached = (path: string): StatFacts | null => {
    let facts = lstatCache.get(path);
    if (facts === undefined) {
      try {
        facts = toStatFacts(lstatSync(path));
      } catch {
        facts = null;
      }
      lstatCache.set(path, facts);
    }
    return facts;
  };
  const all: Array<ExternalCandidateFacts & { aliases: string[] }> = [];

  for (const root of options.roots) {
    if (root.root === 'bundled') continue;
    const rootReal = resolveRoot(root, warnings);
    if (rootReal === null) continue;

    const { entries, problem } = findManifests(rootReal);
    if (problem !== null) {
      warnings.push({
        code: ERROR_CODES.ROOT_MISSING,
        message: `plugin root ${root.path} (${root.origin}) cannot be read (${problem}); make it readable and searchable (r and x) by the user running trellis, or remove it from the ${root.root} roots`,
      });
    }

    const logicalPrefix = joinPrefix(root.path);
    const realPrefix = joinPrefix(rootReal);
    const found = new Array<Found>(entries.length);
    for (let n = 0; n < entries.length; n += 1) {
      const entry = entries[n]!;
      const rel = entry.rel;
      const logical = logicalPrefix + rel;
      const expected = realPrefix + rel;
      let depth = 1;
      for (let i = 0; i < rel.length; i += 1) if (rel.charCodeAt(i) === 47) depth += 1;
      // Fastest path: the walk lstat'ed and read (or refused) the manifest by the root's realpath
      // plus the relative path, without a symlinked folder on the way (checked again with lstat
      // here, as the folders' facts need those anyway), so that is its realpath.
      if (entry.read !== null && !entry.linked && foldersAreReal(logical, logicalPrefix.length, lstatCached)) {
        found[n] = { rel, logical, real: expected, key: expected, direct: true, lstat: entry.read.lstat, depth, read: entry.read };
        continue;
      }
      // Fast path: when lstat shows the manifest as a regular file and every folder below the
      // root as a real folder (no symlink), its realpath is the root's realpath plus the
      // relative path: one lstat instead of realpath(3)'s walk over every component.
      const own = lstatUncached(logical);
      if (own !== null && own.type === 'file' && foldersAreReal(logical, logicalPrefix.length, lstatCached)) {
        found[n] = { rel, logical, real: expected, key: expected, direct: true, lstat: own, depth, read: null };
        continue;
      }
      let real: string | null;
      let key: string | null;
      let unresolved: string | undefined;
      try {
        real = realpathSync.native(logical);
        key = real;
      } catch (error) {
        real = null;
        unresolved = errnoOf(error);
        // A link that leads nowhere has no realpath; the folder holding it does, so paths to
        // the same dangling link (through a loop) still fold into one candidate.
        try {
          key = `${realpathSync.native(dirname(logical))}${sep}${MANIFEST_FILE_NAME}`;
        } catch {
          key = null;
        }
      }
      found[n] = { rel, logical, real, key, direct: real === expected, lstat: null, depth, read: null, unresolved };
    }
    // One sort, by relative path: the order candidates are listed in (the manifest paths share
    // the root's prefix, so this is manifest-path order).
    found.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));

    // Dedupe by realpath within a root (loops, twins): of the paths to one manifest, the one
    // without symlinks wins, then the shallowest, then the first by name (a stable choice); the
    // others become its aliases. A link from one root into another is not folded: it shows up in
    // both roots and the lower root number shadows the other, visibly.
    const winners = new Map<string, Found>();
    let twins = false;
    for (const item of found) {
      if (item.key === null) continue;
      const best = winners.get(item.key);
      if (best === undefined) winners.set(item.key, item);
      else {
        twins = true;
        if (Number(item.direct) - Number(best.direct) > 0 || (item.direct === best.direct && item.depth < best.depth)) winners.set(item.key, item);
      }
    }
    const owners = twins ? new Map<string, ExternalCandidateFacts & { aliases: string[] }>() : null;
    for (const item of found) {
      if (item.key !== null && twins && winners.get(item.key) !== item) continue;
      const facts = collectFacts(root, rootReal, item, lstatCached);
      if (owners !== null && item.key !== null) owners.set(item.key, facts);
      // A loop, not push(...): a root may hold more manifests than a call can take arguments.
      candidates.push(facts);
      all.push(facts);
    }
    if (owners !== null) {
      for (const item of found) {
        if (item.key !== null && winners.get(item.key) !== item) owners.get(item.key)!.aliases.push(item.logical);
      }
    }
  }
  for (const facts of all) facts.aliases.sort();

  const bundled: BundledCandidateFacts[] = [...options.bundled]
    .sort((a, b) => (a.manifest.id < b.manifest.id ? -1 : a.manifest.id > b.manifest.id ? 1 : 0))
    .map((descriptor) => ({ bundled: true, source: BUNDLED_ROOT, descriptor }));
  for (const facts of bundled) candidates.push(facts);
  return { candidates, warnings };
}

function resolveRoot(root: FileRootSpec, warnings: Reason[]): string | null {
  let rootReal: string;
  try {
    rootReal = realpathSync.native(root.path);
  } catch (error) {
    if (root.warnIfMissing) {
      warnings.push({
        code: ERROR_CODES.ROOT_MISSING,
        message: `plugin root ${root.path} (${root.origin}) ${errnoOf(error) === 'ENOENT' ? 'does not exist' : `cannot be read (${errnoOf(error)})`}; create it or remove it from the ${root.root} roots`,
      });
    }
    return null;
  }
  let isDir = false;
  try {
    isDir = statSync(rootReal).isDirectory();
  } catch {
    isDir = false;
  }
  if (!isDir) {
    if (root.warnIfMissing) {
      warnings.push({
        code: ERROR_CODES.ROOT_MISSING,
        message: `plugin root ${root.path} (${root.origin}) is not a folder; point it at a folder that holds plugin folders`,
      });
    }
    return null;
  }
  return rootReal;
}

function collectFacts(
  root: FileRootSpec,
  rootReal: string,
  item: Found,
  lstatCached: (path: string) => StatFacts | null,
): ExternalCandidateFacts & { aliases: string[] } {
  const pluginDir = dirname(item.logical);
  let pluginDirReal: string | null = item.real === null ? null : dirname(item.real);
  if (pluginDirReal === null) {
    try {
      pluginDirReal = realpathSync.native(pluginDir);
    } catch {
      pluginDirReal = null;
    }
  }

  // Symlinks on the way: none when the realpath is the root's realpath plus the relative path.
  const symlinks: string[] = [];
  if (!item.direct) {
    let walk = root.path;
    for (const segment of item.rel.split('/')) {
      walk = join(walk, segment);
      if (lstatCached(walk)?.type === 'symlink') symlinks.push(walk);
    }
  }

  const folders: FolderFacts[] = [];
  if (pluginDirReal !== null) {
    if (containsPath(rootReal, pluginDirReal)) {
      let dir = pluginDirReal;
      folders.push({ path: dir, stat: lstatCached(dir), role: dir === rootReal ? 'root' : 'plugin' });
      while (dir !== rootReal) {
        const parent = dirname(dir);
        if (parent === dir) break;
        dir = parent;
        folders.push({ path: dir, stat: lstatCached(dir), role: dir === rootReal ? 'root' : 'between' });
      }
    } else {
      folders.push({ path: pluginDirReal, stat: lstatCached(pluginDirReal), role: 'plugin' });
    }
  }
  // With a symlink on the way, the folders the manifest was found through are not all on the
  // real path above: the folder holding a manifest link, say. Whoever can write to one of them
  // can repoint the link, so they are checked as well (the links themselves have no mode).
  if (!item.direct) {
    for (let slash = item.rel.indexOf('/'); slash !== -1; slash = item.rel.indexOf('/', slash + 1)) {
      const logicalFolder = item.logical.slice(0, item.logical.length - item.rel.length + slash);
      if (lstatCached(logicalFolder)?.type !== 'directory') continue;
      let real: string;
      try {
        real = realpathSync.native(logicalFolder);
      } catch {
        continue;
      }
      if (!folders.some((f) => f.path === real)) folders.push({ path: real, stat: lstatCached(real), role: 'between' });
    }
  }

  const read = item.read ?? readManifest(item.real, item.lstat, item.unresolved);
  const manifestLstat = item.direct && read.lstat !== null ? read.lstat : lstatCached(item.logical);
  const folderName = basename(pluginDir === root.path ? root.path : pluginDir) || sep;
  return {
    bundled: false,
    source: root,
    rootReal,
    manifestPath: item.logical,
    manifestReal: item.real,
    pluginDir,
    pluginDirReal,
    folderName,
    manifestLstat,
    manifestStat: read.stat,
    folders,
    symlinks,
    aliases: [],
    bytes: read.bytes,
    readRefusal: read.refusal,
  };
}

let scratchBuffer: Buffer | null = null;
/** One reusable read buffer of the limit + 1 byte; the bytes kept are copied out of it. */
function scratch(): Buffer {
  scratchBuffer ??= Buffer.allocUnsafe(MAX_MANIFEST_BYTES + 1);
  return scratchBuffer;
}

// The bytes kept per manifest are views into shared 64 KiB slabs, filled front to back and never
// written twice: 10,000 manifests make ~100 ArrayBuffers instead of 10,000 (less allocation and
// GC sweeping). A view's `byteOffset` is not 0; every reader takes the view, not `.buffer`.
const SLAB_BYTES = 64 * 1024;
let slab: Uint8Array | null = null;
let slabUsed = 0;

/** A copy of `source[0, length)` that stays valid: a fresh view into the current slab. */
function keep(source: Uint8Array, length: number): Uint8Array {
  if (length > SLAB_BYTES / 4) return Uint8Array.prototype.slice.call(source, 0, length);
  if (slab === null || slabUsed + length > slab.length) {
    slab = new Uint8Array(SLAB_BYTES);
    slabUsed = 0;
  }
  slab.set(source.subarray(0, length), slabUsed);
  const view = slab.subarray(slabUsed, slabUsed + length);
  slabUsed += length;
  return view;
}

interface ReadOutcome {
  readonly lstat: StatFacts | null;
  readonly stat: StatFacts | null;
  readonly bytes: Uint8Array | null;
  readonly refusal: ReadRefusal | null;
}

/**
 * Reads a manifest by its realpath without following a final symlink and without blocking:
 * `lstat` first (or the one the walk already made), so a FIFO or device is never opened, then
 * open O_NOFOLLOW|O_NONBLOCK and
 * `fstat` the handle, so what is checked is what is read even if the path was swapped in
 * between (a FIFO swapped in does not block the non-blocking open; fstat refuses it).
 */
function readManifest(real: string | null, known: StatFacts | null, unresolved?: string): ReadOutcome {
  if (real === null) {
    const message =
      unresolved === 'ELOOP'
        ? 'the path is a symlink loop (following it leads back to itself)'
        : unresolved === undefined || unresolved === 'ENOENT'
          ? 'the path is a symlink whose target does not exist'
          : `the path cannot be resolved (${unresolved})`;
    return { lstat: null, stat: null, bytes: null, refusal: { kind: 'DANGLING', message } };
  }
  let lstat: StatFacts | null = known;
  if (lstat === null) {
    try {
      lstat = toStatFacts(lstatSync(real));
    } catch (error) {
      return { lstat: null, stat: null, bytes: null, refusal: { kind: 'OPEN_FAILED', message: `cannot stat it (${errnoOf(error)})` } };
    }
  }
  const outcome = readByType(real, lstat);
  if (typeof outcome !== 'string') return outcome;
  return { lstat, stat: null, bytes: null, refusal: { kind: 'OPEN_FAILED', message: `cannot open it (${outcome})` } };
}

/**
 * The read of a path whose `lstat` is known: anything but a regular file within the size limit
 * is refused by that type and never opened; a regular file is opened O_NOFOLLOW|O_NONBLOCK and
 * read ({@link readOpened}). The errno when the open fails.
 */
function readByType(path: string, lstat: StatFacts): ReadOutcome | string {
  const early = refuse(lstat);
  if (early !== null) return { lstat, stat: lstat, bytes: null, refusal: early };
  let fd: number;
  try {
    fd = openSync(path, OPEN_FLAGS);
  } catch (error) {
    return errnoOf(error);
  }
  return readOpened(fd, lstat);
}

/** Reads an open manifest (and closes it): `fstat` the handle, refuse anything but a regular file, read at most the limit + 1. */
function readOpened(fd: number, lstat: StatFacts): ReadOutcome {
  try {
    const stat = toStatFacts(fstatSync(fd));
    const refusal = refuse(stat);
    if (refusal !== null) return { lstat, stat, bytes: null, refusal };
    // Read to the limit + 1 whatever fstat said: a file may grow between fstat and read.
    const buffer = scratch();
    let length = 0;
    for (;;) {
      const wanted = buffer.length - length;
      const n = readSync(fd, buffer, length, wanted, null);
      length += n;
      if (length > MAX_MANIFEST_BYTES) {
        return { lstat, stat, bytes: null, refusal: { kind: 'TOO_LARGE', message: `it holds more than the ${MAX_MANIFEST_BYTES}-byte limit` } };
      }
      if (n === 0) break;
      // A regular file on a disk reads short only at its end, which fstat's size says: no extra
      // read() to see 0. A file whose size says nothing (procfs and the like report 0, and
      // read short before their end) is read until read() returns 0.
      if (n < wanted && stat.size > 0 && length >= stat.size) break;
    }
    return { lstat, stat, bytes: keep(buffer, length), refusal: null };
  } catch (error) {
    return { lstat, stat: null, bytes: null, refusal: { kind: 'READ_FAILED', message: `cannot read it (${errnoOf(error)})` } };
  } finally {
    closeSync(fd);
  }
}

function refuse(stat: StatFacts): ReadRefusal | null {
  if (stat.type !== 'file') return { kind: 'NOT_REGULAR', message: `it is a ${stat.type}, not a regular file` };
  if (stat.size > MAX_MANIFEST_BYTES) return { kind: 'TOO_LARGE', message: `it is ${stat.size} bytes, more than the ${MAX_MANIFEST_BYTES}-byte limit` };
  return null;
}
