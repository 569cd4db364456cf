import { realpathSync, statSync } from 'node:fs';
import { basename, dirname, join, sep } from 'node:path';
import { ERROR_CODES } from '@trellis/sdk';
import type { BundledPluginDescriptor } from '@trellis/sdk/internal';
import { containsPath } from './containsPath.ts';
import { rootReadMemo } from './ManifestReadMemo.ts';
import { ManifestReader } from './readManifestFile.ts';
import type { RegistryBuildCache } from './RegistryBuildCache.ts';
import type { ReadOutcome } from './readManifestFile.ts';
import { BUNDLED_ROOT } from './resolveDiscoveryRoots.ts';
import { createLstatCache, errnoOf, lstatFacts } from './statFacts.ts';
import type {
  BundledCandidateFacts,
  CandidateFacts,
  DiscoveryResult,
  ExternalCandidateFacts,
  FileRootSpec,
  FolderFacts,
  Reason,
  RootSpec,
  StatFacts,
} from './types.ts';
import { runSteps, type Steps } from '@trellis/sdk/internal';
import { MANIFEST_FILE_NAME, walkPluginRootSteps } from './walkPluginRoot.ts';
import type { WalkEntry } from './walkPluginRoot.ts';

export { toStatFacts } from './statFacts.ts';
export { IGNORED_FOLDER_NAMES, MANIFEST_FILE_NAME, MAX_PLUGIN_DEPTH } from './walkPluginRoot.ts';

/** Inputs of {@link discoverCandidates}. */
export interface DiscoverCandidatesOptions {
  /** From `resolveDiscoveryRoots`; the bundled root (if present) is served from `bundled`. */
  readonly roots: readonly RootSpec[];
  /** The compiled-in descriptors (root 4); no file is read for them. */
  readonly bundled: readonly BundledPluginDescriptor[];
  /** A host's cache across builds: a candidate whose facts all equal the last build's keeps that build's object. */
  readonly buildCache?: Pick<RegistryBuildCache, 'keepServing' | 'sameFacts' | 'readMemo'>;
}

/** A manifest the walk found, located: its paths, and the read when the walk already made it. */
interface Found {
  readonly rel: string;
  readonly logical: string;
  readonly real: string | null;
  /** What paths to one manifest share: its realpath, or for a dangling link its folder's realpath and name. */
  readonly key: string | null;
  /** Why the realpath failed, when it did (ENOENT, ELOOP, …). */
  readonly unresolved?: string;
  /** Its realpath is the root's realpath plus its relative path: no symlink on the way. */
  readonly direct: boolean;
  /** `lstat` of the manifest, when locating it needed one. */
  readonly lstat: StatFacts | null;
  readonly depth: number;
  /** The read, when the walk already made it. */
  readonly read: ReadOutcome | null;
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
 * Where a manifest the walk found really is: the one derivation of its realpath. When no folder
 * between the root and the manifest is a symlink and the manifest itself is not one, the realpath
 * is the root's realpath plus the relative path (a few cached `lstat`s instead of realpath(3)'s
 * walk over every component); otherwise `realpath` says. A property test holds this equal to
 * `realpathSync.native` over random trees of links.
 */
function locateManifest(
  entry: WalkEntry,
  options: { readonly logicalPrefix: string; readonly realPrefix: string; readonly lstatCached: (path: string) => StatFacts | null },
): Found {
  const { rel } = entry;
  const logical = options.logicalPrefix + rel;
  const expected = options.realPrefix + rel;
  let depth = 1;
  for (let i = 0; i < rel.length; i += 1) if (rel.charCodeAt(i) === 47) depth += 1;
  if (!entry.linked && foldersAreReal(logical, options.logicalPrefix.length, options.lstatCached)) {
    // The walk reads a manifest only when it is not a symlink; otherwise one lstat says so.
    if (entry.read !== null)
      return { rel, logical, real: expected, key: expected, direct: true, lstat: entry.read.lstat, depth, read: entry.read };
    const lstat = lstatFacts(logical);
    if (lstat !== null && lstat.type !== 'symlink')
      return { rel, logical, real: expected, key: expected, direct: true, lstat, depth, read: null };
  }
  try {
    const real = realpathSync.native(logical);
    return { rel, logical, real, key: real, direct: real === expected, lstat: null, depth, read: null };
  } catch (error) {
    // A link that leads nowhere has no realpath; the folder holding it does, so paths to the same
    // dangling link (through a loop) still fold into one candidate.
    let key: string | null;
    try {
      key = `${realpathSync.native(dirname(logical))}${sep}${MANIFEST_FILE_NAME}`;
    } catch {
      key = null;
    }
    return { rel, logical, real: null, key, direct: false, lstat: null, depth, read: null, unresolved: errnoOf(error) };
  }
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
  return runSteps(discoverCandidatesSteps(options));
}

/** {@link discoverCandidates}, pausable while it walks and after every manifest located and candidate collected (see `Steps`). */
export function* discoverCandidatesSteps(options: DiscoverCandidatesOptions): Steps<DiscoveryResult> {
  const warnings: Reason[] = [];
  const candidates: CandidateFacts[] = [];
  const lstatCached = createLstatCache();
  const reader = new ManifestReader();
  const all: Array<ExternalCandidateFacts & { aliases: string[] }> = [];

  for (const root of options.roots) {
    if (root.root === 'bundled') continue;
    const rootReal = resolveRoot(root, warnings);
    if (rootReal === null) continue;

    const memo = options.buildCache !== undefined ? rootReadMemo(options.buildCache.readMemo, rootReal) : undefined;
    const { entries, problem } = yield* walkPluginRootSteps(rootReal, reader, memo);
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
      if (n > 0) yield;
      found[n] = locateManifest(entries[n]!, { logicalPrefix, realPrefix, lstatCached });
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
        if (Number(item.direct) - Number(best.direct) > 0 || (item.direct === best.direct && item.depth < best.depth))
          winners.set(item.key, item);
      }
    }
    const owners = twins ? new Map<string, ExternalCandidateFacts & { aliases: string[] }>() : null;
    for (let n = 0; n < found.length; n += 1) {
      if (n > 0) yield;
      const item = found[n]!;
      if (item.key !== null && twins && winners.get(item.key) !== item) continue;
      let facts = collectFacts({ root, rootReal, item, lstatCached, reader });
      if (options.buildCache !== undefined) {
        facts = options.buildCache.keepServing(facts);
        // Twins gain aliases below, after the comparison: their facts are never taken over.
        if (owners === null) facts = options.buildCache.sameFacts(facts);
      }
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
  options.buildCache?.readMemo.endRun();
  for (const facts of all) facts.aliases.sort();

  const bundled: BundledCandidateFacts[] = [...options.bundled]
    .sort((a, b) => (a.manifest.id < b.manifest.id ? -1 : a.manifest.id > b.manifest.id ? 1 : 0))
    .map(bundledFactsOf);
  for (const facts of bundled) candidates.push(facts);
  return { candidates, warnings };
}

// One facts object per bundled descriptor for the life of the process: they are plain data about
// compiled-in code, and a host's build cache takes their admissions over by identity.
const bundledFacts = new WeakMap<BundledPluginDescriptor, BundledCandidateFacts>();
function bundledFactsOf(descriptor: BundledPluginDescriptor): BundledCandidateFacts {
  let facts = bundledFacts.get(descriptor);
  if (facts === undefined) {
    facts = Object.freeze({ bundled: true, source: BUNDLED_ROOT, descriptor });
    bundledFacts.set(descriptor, facts);
  }
  return facts;
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

function collectFacts(options: {
  readonly root: FileRootSpec;
  readonly rootReal: string;
  readonly item: Found;
  readonly lstatCached: (path: string) => StatFacts | null;
  readonly reader: ManifestReader;
}): ExternalCandidateFacts & { aliases: string[] } {
  const { root, rootReal, item, lstatCached, reader } = options;
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

  const read = item.read ?? reader.read(item.real, item.lstat, item.unresolved);
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
