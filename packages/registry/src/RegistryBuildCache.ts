import { keptByInputs, samePlainData } from '@trellis/sdk/internal';
import { createManifestReadMemo, type ManifestReadMemo } from './ManifestReadMemo.ts';
import { registryDependency } from './prepareRegistry.ts';
import { ownBytes } from './readManifestFile.ts';
import { sameStat } from './statFacts.ts';
import type { ParsedManifest } from './parseManifest.ts';
import type {
  AdmittedCandidate,
  CandidateFacts,
  DecidedCandidate,
  ExternalCandidateFacts,
  FolderFacts,
  ReadRefusal,
  SnapshotEntry,
  StatFacts,
} from './types.ts';

/**
 * What one snapshot build takes over from the build before it, for a host that builds again and
 * again (a live host's reloads). Every file is still found, stat'ed, read and compared on every
 * build: the cache trusts nothing but equal values. What it saves is work and new objects:
 *
 * - a manifest whose bytes did not change is not parsed again (parsing, TOML then the schema, is
 *   most of the registry's CPU per manifest and a pure function of the bytes);
 * - a candidate whose facts (paths, stat facts, bytes) all equal the last build's keeps the last
 *   build's facts object, and then its admission (a pure function of the facts and the policy)
 *   when the policy is the same too;
 * - an admission decided from the same inputs (its config entry, allow and deny, the profile, the
 *   command-line switches, the environment variables and programs it requires, its settings
 *   patch) keeps the last decision, and a decision kept keeps its snapshot entry.
 *
 * The objects a build keeps are what the next generation holds for as long as it serves; taking
 * the unchanged ones over leaves the collector little to copy while a reload builds (see
 * docs/reload.md). Hold one per host, never per process (decision 0009).
 *
 * One thing it keeps on purpose rather than by equality: the manifest of a plugin the serving
 * generation runs (see `serving`), once it no longer validates (an edit saved half-way, a typo),
 * is admitted with the bytes that plugin runs from, while it stays in the same plugin folder; so a
 * live host keeps serving that plugin as it was rather than stopping it or holding every other
 * change back (see `keptManifests`). Only bytes a generation admitted, enabled and started stand
 * in: never ones seen only while the plugin was rejected or disabled (someone else may have written
 * them). Everything else about the candidate, its file modes, owner and folders, is still what
 * discovery found now.
 */
export interface RegistryBuildCache {
  /** The manifests earlier builds read, taken over while untouched (see `ManifestReadMemo`). */
  readonly readMemo: ManifestReadMemo;
  /** `parseManifest(bytes)`, answered from the last builds when the same bytes were parsed. */
  parse(bytes: Uint8Array): ParsedManifest;
  /**
   * `facts`, or, when its manifest no longer validates and the serving generation runs that plugin
   * from the same folder (real paths, device and inode), `facts` with the bytes it runs from. Call
   * it for every candidate found.
   */
  keepServing<T extends ExternalCandidateFacts>(facts: T): T;
  /** `facts`, or the last build's facts of the same manifest when every one of them is equal. */
  sameFacts<T extends ExternalCandidateFacts>(facts: T): T;
  /** `admit()`, or the last build's admission of these very facts under the same policy. */
  admit(facts: CandidateFacts, policyKey: string, admit: () => AdmittedCandidate): AdmittedCandidate;
  /** `decide()`, or the last build's decision of this very admission when `inputs` are equal (`samePlainData`). */
  decide(admitted: AdmittedCandidate, inputs: unknown, decide: () => DecidedCandidate): DecidedCandidate;
  /** `make()`, or the snapshot entry the last build made of this very decision. */
  entry(decided: DecidedCandidate, make: () => SnapshotEntry): SnapshotEntry;
  /** Ends a build: the next build finds what this one kept, and nothing older (removed plugins are forgotten). */
  endBuild(): void;
  /**
   * The manifests the build just ended admitted with their last valid bytes, because the bytes on
   * disk no longer validate: manifest path → the parse errors (what `MANIFEST_INVALID` would say).
   */
  keptManifests(): ReadonlyMap<string, readonly string[]>;
  /**
   * The candidates the generation serving now admitted and enabled (a live host tells after its
   * first build and after each swap): only their bytes may stand in (`keepServing`).
   */
  serving(facts: Iterable<ExternalCandidateFacts>): void;
}

/** Creates an empty {@link RegistryBuildCache}; pass it as `buildCache` to every build of one host. */
export function createRegistryBuildCache(): RegistryBuildCache {
  // What this build kept, and what the build before it kept (the one this build looks up).
  let parsed = new Map<string, { readonly key: string; readonly manifest: ParsedManifest }>();
  let parsedBefore = new Map<string, { readonly key: string; readonly manifest: ParsedManifest }>();
  let facts = new Map<string, ExternalCandidateFacts>();
  let factsBefore = new Map<string, ExternalCandidateFacts>();
  let kept = new Map<string, readonly string[]>();
  let keptBefore: ReadonlyMap<string, readonly string[]> = new Map();
  let running = new Map<string, ExternalCandidateFacts>();
  // By facts object: facts taken over are the same object, so their admission can be too.
  const admissions = new WeakMap<CandidateFacts, { readonly inputs: unknown; readonly value: AdmittedCandidate }>();
  // Likewise down the line: by admission, then by decision.
  const decisions = new WeakMap<AdmittedCandidate, { readonly inputs: unknown; readonly value: DecidedCandidate }>();
  const entries = new WeakMap<DecidedCandidate, { readonly inputs: unknown; readonly value: SnapshotEntry }>();
  const cache: RegistryBuildCache = {
    readMemo: createManifestReadMemo(),
    parse(bytes) {
      // A one-byte-per-char copy of the bytes: exact, and far cheaper than a UTF-8 decode and a parse.
      const key = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
      let kept = parsed.get(key) ?? parsedBefore.get(key);
      // The map keeps the earlier key string: this build's copy is garbage at once, cheap to collect.
      kept ??= { key, manifest: registryDependency('parseManifest')(bytes) };
      parsed.set(kept.key, kept);
      return kept.manifest;
    },
    keepServing(found) {
      const serving = running.get(found.manifestPath);
      if (serving === undefined || serving.bytes === null || found.bytes === null || sameBytes(serving.bytes, found.bytes)) return found;
      // The same plugin folder, not only the same path: another folder put there is judged as it is.
      if (serving.manifestReal !== found.manifestReal || serving.pluginDirReal !== found.pluginDirReal) return found;
      if (!sameFolderIdentity(pluginFolderOf(serving), pluginFolderOf(found))) return found;
      // Parsed here, once (admission takes the parse from the cache).
      const errors = cache.parse(found.bytes).errors;
      if (errors.length === 0) return found;
      kept.set(found.manifestPath, errors);
      return { ...found, bytes: serving.bytes };
    },
    serving(list) {
      running = new Map();
      for (const f of list) {
        const bytes = f.bytes === null ? null : ownBytes(f.bytes);
        running.set(f.manifestPath, bytes === f.bytes ? f : { ...f, bytes });
      }
    },
    sameFacts(next) {
      const before = factsBefore.get(next.manifestPath);
      let taken = before !== undefined && sameExternalFacts(before, next) ? (before as typeof next) : next;
      // Facts kept across builds get bytes of their own (see ownBytes).
      const bytes = taken === next && next.bytes !== null ? ownBytes(next.bytes) : taken.bytes;
      if (bytes !== taken.bytes) taken = { ...next, bytes };
      facts.set(next.manifestPath, taken);
      return taken;
    },
    admit(candidate, policyKey, admit) {
      return keptByInputs(admissions, candidate, policyKey, admit);
    },
    decide(admitted, inputs, decide) {
      return keptByInputs(decisions, admitted, inputs, decide);
    },
    entry(decided, make) {
      // An entry is made of its decision alone: nothing else to compare.
      return keptByInputs(entries, decided, null, make);
    },
    endBuild() {
      parsedBefore = parsed;
      parsed = new Map();
      factsBefore = facts;
      facts = new Map();
      keptBefore = kept;
      kept = new Map();
    },
    keptManifests() {
      return keptBefore;
    },
  };
  return cache;
}

/**
 * Whether two discoveries of a manifest found the same: every field of the facts, field by field
 * (the generic `samePlainData` costs ten times as much, for each of 1,000 plugins per reload).
 * A test changes each leaf of real facts in turn and expects a difference, so a field added to
 * the facts and not compared here fails it.
 */
export function sameExternalFacts(a: ExternalCandidateFacts, b: ExternalCandidateFacts): boolean {
  return (
    a.manifestPath === b.manifestPath &&
    a.manifestReal === b.manifestReal &&
    a.pluginDir === b.pluginDir &&
    a.pluginDirReal === b.pluginDirReal &&
    a.rootReal === b.rootReal &&
    a.folderName === b.folderName &&
    a.bundled === b.bundled &&
    sameStat(a.manifestLstat, b.manifestLstat) &&
    sameStat(a.manifestStat, b.manifestStat) &&
    sameBytes(a.bytes, b.bytes) &&
    sameRefusal(a.readRefusal, b.readRefusal) &&
    sameList(a.folders, b.folders, sameFolder) &&
    sameList(a.symlinks, b.symlinks, sameString) &&
    sameList(a.aliases, b.aliases, sameString) &&
    (a.source === b.source || samePlainData(a.source, b.source))
  );
}

const pluginFolderOf = (facts: ExternalCandidateFacts): StatFacts | null => facts.folders.find((f) => f.role === 'plugin')?.stat ?? null;

function sameFolderIdentity(a: StatFacts | null, b: StatFacts | null): boolean {
  return a !== null && b !== null && a.dev === b.dev && a.ino === b.ino;
}

function sameFolder(a: FolderFacts, b: FolderFacts): boolean {
  return a.path === b.path && a.role === b.role && sameStat(a.stat, b.stat);
}

function sameRefusal(a: ReadRefusal | null, b: ReadRefusal | null): boolean {
  if (a === null || b === null) return a === b;
  return a.kind === b.kind && a.message === b.message;
}

function sameBytes(a: Uint8Array | null, b: Uint8Array | null): boolean {
  if (a === null || b === null || a === b) return a === b;
  return Buffer.compare(a, b) === 0;
}

const sameString = (a: string, b: string): boolean => a === b;

function sameList<T>(a: readonly T[], b: readonly T[], same: (x: T, y: T) => boolean): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i += 1) if (!same(a[i]!, b[i]!)) return false;
  return true;
}
