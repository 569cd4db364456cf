import type { DiscoveryRoot, PluginManifest, ProfileName } from '@trellis/sdk';
import type { BundledPluginDescriptor } from '@trellis/sdk/internal';

// ── the snapshot (shared shape: the catalog, runtime and app read it structurally) ───────────

/** What the registry decided about one candidate. */
export type PluginState = 'enabled' | 'disabled' | 'unavailable' | 'rejected' | 'shadowed';

/** Why something is so: a stable code from `ERROR_CODES` and a message that says what to do. */
export interface Reason {
  readonly code: string;
  readonly message: string;
}

/** Where a candidate came from. */
export interface CandidateSource {
  readonly root: DiscoveryRoot;
  readonly priority: 0 | 1 | 2 | 3 | 4;
  /** Absolute path of `plugin.toml` as found (not resolved); null for bundled plugins. */
  readonly manifestPath: string | null;
}

/** One candidate, bundled or external, kept even when rejected or shadowed. */
export interface SnapshotEntry {
  /** From the manifest when it parses, else the plugin folder's name. */
  readonly id: string;
  /** The manifest's kind, or `unknown` when the manifest did not parse. */
  readonly kind: string;
  readonly state: PluginState;
  readonly source: CandidateSource;
  /** Why this state; the first one is the headline. */
  readonly reasons: readonly Reason[];
  readonly warnings: readonly Reason[];
  /**
   * The parsed `plugin.toml` with defaults applied; null when it did not parse. In memory only:
   * the JSON form (`serializeSnapshot`) carries `manifestSha256` instead.
   */
  readonly manifest: PluginManifest | null;
  /**
   * sha256 (hex) of the manifest as read: the `plugin.toml` bytes for external plugins, the
   * stable JSON of the embedded manifest for bundled ones; null when nothing was read.
   */
  readonly manifestSha256: string | null;
  readonly bundled: boolean;
  /** Realpath of the plugin folder (external only; null for bundled or when it cannot be resolved). */
  readonly pluginDir: string | null;
}

/** The registry's answer: every candidate with its state and reasons. Frozen; holds no handles. */
export interface PluginRegistrySnapshot {
  readonly profile: ProfileName;
  /** sha256 (hex) of the stable JSON of `{ plugins, profile, warnings }` (entries without `manifest`). */
  readonly hash: string;
  /** Sorted by id, then priority, then manifest path (see `compareEntries`). */
  readonly plugins: readonly SnapshotEntry[];
  /** Host-level warnings, e.g. `ROOT_MISSING`. */
  readonly warnings: readonly Reason[];
}

// ── discovery roots ──────────────────────────────────────────────────────────────────────────

/** A filesystem discovery root (0–3). */
export interface FileRootSpec {
  readonly root: Exclude<DiscoveryRoot, 'bundled'>;
  readonly priority: 0 | 1 | 2 | 3;
  /** Absolute path of the root folder. */
  readonly path: string;
  /** Where the root was configured, for messages: `--plugin-path`, `TRELLIS_PLUGIN_PATH`, … */
  readonly origin: string;
  /** Whether a missing root is a `ROOT_MISSING` warning (explicit and env) or silent (workspace, user). */
  readonly warnIfMissing: boolean;
  /**
   * Set on the workspace root when the workspace is not trusted: the workspace's real path. Its
   * candidates are listed but never take part: each is `disabled` with `WORKSPACE_UNTRUSTED`, and
   * none can shadow a plugin of the same id from a trusted root.
   */
  readonly untrustedWorkspace?: string;
}

/** The compiled-in root (4). */
export interface BundledRootSpec {
  readonly root: 'bundled';
  readonly priority: 4;
  readonly path: null;
  readonly origin: string;
  readonly warnIfMissing: false;
}

/** One discovery root, in priority order. */
export type RootSpec = FileRootSpec | BundledRootSpec;

// ── discovery facts ──────────────────────────────────────────────────────────────────────────

/** The type of a filesystem object as `lstat`/`stat`/`fstat` reported it. */
export type FileType = 'file' | 'directory' | 'symlink' | 'fifo' | 'socket' | 'char-device' | 'block-device' | 'unknown';

/** Plain facts from one `stat` call. */
export interface StatFacts {
  readonly type: FileType;
  /** Full `st_mode` (type and permission bits). */
  readonly mode: number;
  readonly uid: number;
  readonly gid: number;
  readonly nlink: number;
  readonly size: number;
  /**
   * Which file or folder this is (`st_dev`, `st_ino`): one put in its place at the same path (a
   * folder moved away and another made there) has others.
   */
  readonly dev: number;
  readonly ino: number;
}

/** A folder on the way from the plugin folder up to (and including) the root. */
export interface FolderFacts {
  /** Real path of the folder (no symlinks). */
  readonly path: string;
  /** `lstat` of the real path; null when it could not be read. */
  readonly stat: StatFacts | null;
  /** Whether this folder is the plugin folder, one in between, or the discovery root itself. */
  readonly role: 'plugin' | 'between' | 'root';
}

/** Why a manifest's bytes were not read. */
export interface ReadRefusal {
  /** `NOT_REGULAR`, `TOO_LARGE`, `DANGLING`, `OPEN_FAILED`, `READ_FAILED`. */
  readonly kind: 'NOT_REGULAR' | 'TOO_LARGE' | 'DANGLING' | 'OPEN_FAILED' | 'READ_FAILED';
  readonly message: string;
}

/** Everything discovery learned about one `plugin.toml` on disk. Admission reads only this. */
export interface ExternalCandidateFacts {
  readonly bundled: false;
  readonly source: FileRootSpec;
  /** Realpath of the discovery root. */
  readonly rootReal: string;
  /** `plugin.toml` as found: root path joined with the relative path the walk produced. */
  readonly manifestPath: string;
  /** Realpath of the manifest; null when it cannot be resolved (a dangling symlink). */
  readonly manifestReal: string | null;
  /** The folder holding `plugin.toml` as found. */
  readonly pluginDir: string;
  /** Realpath of the plugin folder; null when it cannot be resolved. */
  readonly pluginDirReal: string | null;
  /** Name of the plugin folder as found, the id used when the manifest does not parse. */
  readonly folderName: string;
  /** `lstat` of the manifest path as found (is it a symlink?). */
  readonly manifestLstat: StatFacts | null;
  /** `fstat` of the open handle: what was actually read. Null when the file was not opened. */
  readonly manifestStat: StatFacts | null;
  /** Folders from the plugin folder up to the root, on the resolved path. */
  readonly folders: readonly FolderFacts[];
  /** Paths as found (manifest and folders below the root) that were symlinks. */
  readonly symlinks: readonly string[];
  /** Other paths found by the walk that resolve to this same manifest (symlinked twins, loops). */
  readonly aliases: readonly string[];
  /** The bytes read (at most 256 KiB); null when refused. */
  readonly bytes: Uint8Array | null;
  readonly readRefusal: ReadRefusal | null;
}

/** A compiled-in plugin: its descriptor, no file facts. */
export interface BundledCandidateFacts {
  readonly bundled: true;
  readonly source: BundledRootSpec;
  readonly descriptor: BundledPluginDescriptor;
}

/** One candidate as discovery found it. */
export type CandidateFacts = ExternalCandidateFacts | BundledCandidateFacts;

/** What `discoverCandidates` returns. */
export interface DiscoveryResult {
  /** External candidates in root order, then by manifest path; bundled ones last, by id. */
  readonly candidates: readonly CandidateFacts[];
  /** Host-level warnings (`ROOT_MISSING`). */
  readonly warnings: readonly Reason[];
}

// ── admission ────────────────────────────────────────────────────────────────────────────────

/** The result of one admission check. */
export type CheckResult = 'pass' | 'fail' | 'warn' | 'skip';

/** One admission check as `explain` shows it. */
export interface AdmissionCheck {
  /** The reason code this check produces when it fails or warns, e.g. `PATH_ESCAPE`. */
  readonly code: string;
  /** What was checked, in words. */
  readonly title: string;
  readonly result: CheckResult;
  /** What was found; for a failure, what to do. */
  readonly message: string;
}

/** A candidate after admission: parsed manifest, every check, and whether it was rejected. */
export interface AdmittedCandidate {
  readonly facts: CandidateFacts;
  /** From the manifest when it parses, else the folder name. */
  readonly id: string;
  readonly kind: string;
  readonly manifest: PluginManifest | null;
  readonly rejected: boolean;
  /** Failing checks as reasons, headline first. Empty unless rejected. */
  readonly reasons: readonly Reason[];
  readonly warnings: readonly Reason[];
  /** Every check in the order it ran; empty for bundled candidates (they skip admission). */
  readonly checks: readonly AdmissionCheck[];
}

/** What admission needs besides the facts. */
export interface AdmissionPolicy {
  /** The current user's uid; files and folders must belong to it or to root. */
  readonly uid: number;
  /** `[plugins] allow`: admits side-effecting external plugins. */
  readonly allow: readonly string[];
  /** Ids of the bundled plugins, each with whether it is required. */
  readonly bundledIds: ReadonlyMap<string, { readonly required: boolean }>;
}

// ── decision ─────────────────────────────────────────────────────────────────────────────────

/** One step of the decision, in order, as `explain` shows it. */
export interface DecisionStep {
  /** `identity`, `policy`, `implementation`, `config`, `availability`, `tools`. */
  readonly step: string;
  /** What was found, in words. */
  readonly message: string;
}

/** A candidate after decision: its final state and how it got there. */
export interface DecidedCandidate {
  readonly admitted: AdmittedCandidate;
  readonly state: PluginState;
  readonly reasons: readonly Reason[];
  readonly warnings: readonly Reason[];
  readonly trace: readonly DecisionStep[];
  /** Resolved settings (defaults ← `[runtime.tools.<key>]` ← entry config); only for enabled or unavailable plugins. */
  readonly settings: Readonly<Record<string, unknown>> | null;
}

/** A startup profile from `config/profiles.toml`. */
export interface ProfileDefinition {
  readonly description: string;
  readonly includes: readonly string[];
}

/** `config/profiles.toml` parsed: profile name → definition. */
export type ProfilesData = Readonly<Record<string, ProfileDefinition>>;
