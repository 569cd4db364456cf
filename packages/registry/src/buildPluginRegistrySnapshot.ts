import type { RuntimeConfig } from '@trellis/config';
import { ERROR_CODES } from '@trellis/sdk';
import type { BundledPluginDescriptor } from '@trellis/sdk/internal';
import { admitCandidatesSteps } from './admitCandidate.ts';
import { buildSnapshotSteps, orderDecided } from './buildSnapshot.ts';
import { decideSteps, type CommandLineSwitches } from './decide.ts';
import { discoverCandidatesSteps } from './discoverCandidates.ts';
import { runSteps, runStepsPausing, type Pause, type Steps } from '@trellis/sdk/internal';
import { findCommandsOnPath } from './findCommandsOnPath.ts';
import type { RegistryBuildCache } from './RegistryBuildCache.ts';
import type { AdmissionPolicy, DecidedCandidate, PluginRegistrySnapshot, ProfilesData, Reason, RootSpec } from './types.ts';

/** Inputs of {@link buildPluginRegistrySnapshot}. */
export interface BuildPluginRegistrySnapshotOptions {
  readonly config: RuntimeConfig;
  /** From `resolveDiscoveryRoots`. */
  readonly roots: readonly RootSpec[];
  readonly bundled: readonly BundledPluginDescriptor[];
  /** `config/profiles.toml`, parsed with `parseProfiles`. */
  readonly profiles: ProfilesData;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The current uid for the owner check; default `process.getuid()`. */
  readonly uid?: number;
  /** Program lookups; default: `findCommandsOnPath` over every `requires_commands` name with `env.PATH`. */
  readonly commandsOnPath?: Readonly<Record<string, string | null>>;
  /**
   * The ids `--allow/--enable/--disable` put into `config` for this run, so the reasons say they
   * came from the command line rather than from runtime.toml.
   */
  readonly commandLine?: CommandLineSwitches;
  /**
   * A host that builds snapshots again and again (a live host's reloads) passes one cache to each
   * build: manifests whose bytes did not change are not parsed again, and candidates whose facts
   * did not change keep their facts and admission (see `RegistryBuildCache`). Default: none.
   */
  readonly buildCache?: RegistryBuildCache;
}

/** What {@link buildPluginRegistrySnapshot} returns. */
export interface PluginRegistryResult {
  readonly snapshot: PluginRegistrySnapshot;
  /** Resolved settings of every enabled or unavailable plugin, by id. Never serialized: may hold secrets. */
  readonly settings: ReadonlyMap<string, Readonly<Record<string, unknown>>>;
  /** Every candidate with its facts, admission checks and decision steps, in snapshot order (for `explain`). */
  readonly trace: readonly DecidedCandidate[];
  /**
   * With a `buildCache`: plugins admitted with the last manifest that validated, because the one
   * on disk no longer does (see `RegistryBuildCache`). Empty without a cache.
   */
  readonly keptManifests: readonly KeptManifest[];
}

/** A plugin a build admitted with its last valid manifest; `message` says what is wrong with the file now. */
export interface KeptManifest {
  readonly id: string;
  readonly manifestPath: string;
  /** As `MANIFEST_INVALID` would put it: the path, then the parse errors. */
  readonly message: string;
}

/**
 * The whole pipeline: discover (I/O) → admit → decide → snapshot (pure). Nothing a user wrote
 * disappears: every candidate is in the snapshot with its reasons, and host-level problems
 * (missing roots, an unknown profile, policy naming no plugin) are snapshot warnings.
 */
export function buildPluginRegistrySnapshot(options: BuildPluginRegistrySnapshotOptions): PluginRegistryResult {
  return runSteps(registryPipeline(options));
}

/**
 * {@link buildPluginRegistrySnapshot} in steps, asking `pause()` after every folder walked,
 * manifest located, candidate collected, admitted or decided, and snapshot entry frozen (see
 * `createPacer` in `@trellis/sdk/internal`), so a long-running host that rebuilds its registry
 * keeps serving calls meanwhile: the event loop is held for one slice of the work at a time, not
 * for all of it. The same pipeline and the same result.
 */
export function buildPluginRegistrySnapshotInSteps(
  options: BuildPluginRegistrySnapshotOptions,
  pause: Pause,
): Promise<PluginRegistryResult> {
  return runStepsPausing(registryPipeline(options), pause);
}

/** The pipeline; it yields where the stepped driver may pause. */
function* registryPipeline(options: BuildPluginRegistrySnapshotOptions): Steps<PluginRegistryResult> {
  const { config } = options;
  const cache = options.buildCache;
  const discovery = yield* discoverCandidatesSteps({
    roots: options.roots,
    bundled: options.bundled,
    ...(cache !== undefined ? { buildCache: cache } : {}),
  });
  yield;
  const bundledIds = new Map<string, { required: boolean }>();
  for (const d of options.bundled) bundledIds.set(d.manifest.id, { required: d.manifest.required });
  const policy: AdmissionPolicy = {
    uid: options.uid ?? (typeof process.getuid === 'function' ? process.getuid() : 0),
    allow: config.plugins.allow,
    bundledIds,
  };
  const { candidates } = discovery;
  const policyKey = cache === undefined ? '' : policyKeyOf(policy);
  const admitted = yield* admitCandidatesSteps(
    candidates,
    policy,
    cache === undefined
      ? undefined
      : { parse: (bytes) => cache.parse(bytes), admit: (facts, admit) => cache.admit(facts, policyKey, admit) },
  );
  cache?.endBuild();
  const keptManifests: KeptManifest[] = [];
  const keptPaths = cache?.keptManifests();
  if (keptPaths !== undefined && keptPaths.size > 0) {
    const listed = new Set<string>();
    for (const { facts, id } of admitted) {
      // A manifest found twice (a root listed with a folder inside it) is said once.
      if (facts.bundled || listed.has(facts.manifestPath)) continue;
      const errors = keptPaths.get(facts.manifestPath);
      if (errors === undefined) continue;
      listed.add(facts.manifestPath);
      keptManifests.push({ id, manifestPath: facts.manifestPath, message: `${facts.manifestPath}: ${errors.join('; ')}` });
    }
  }

  let commandsOnPath = options.commandsOnPath;
  if (commandsOnPath === undefined) {
    const names = new Set<string>();
    for (const a of admitted) for (const n of a.manifest?.requires_commands ?? []) names.add(n);
    commandsOnPath = names.size === 0 ? {} : findCommandsOnPath([...names], options.env);
  }
  const decided = yield* decideSteps(admitted, {
    config,
    profiles: options.profiles,
    env: options.env,
    commandsOnPath,
    ...(options.commandLine ? { commandLine: options.commandLine } : {}),
    ...(cache !== undefined ? { buildCache: cache } : {}),
  });

  yield;
  const warnings: Reason[] = [...discovery.warnings];
  if (!(config.plugins.profile in options.profiles)) {
    warnings.push({
      code: ERROR_CODES.CONFIG_SCHEMA,
      message: `[plugins] profile "${config.plugins.profile}" is not defined in profiles.toml; only plugins enabled explicitly are on. Known profiles: ${Object.keys(options.profiles).sort().join(', ') || 'none'}`,
    });
  }
  const named: Array<[string, string]> = [
    ...config.plugins.allow.map((id): [string, string] => [
      id,
      options.commandLine?.allow?.includes(id) ? `--allow ${id}` : '[plugins] allow',
    ]),
    ...config.plugins.deny.map((id): [string, string] => [id, '[plugins] deny']),
    ...Object.keys(config.plugins.entries).map((id): [string, string] => [id, `[plugins.entries.${id}]`]),
  ];
  // The id set is built only when the config names some plugin (usually it names none).
  const ids = named.length === 0 ? null : new Set(admitted.map((a) => a.id));
  for (const [id, where] of named) {
    if (!ids!.has(id)) {
      warnings.push({
        code: ERROR_CODES.UNKNOWN_KEY,
        message: `${where} names "${id}", but no plugin has that id; check the spelling (\`trellis plugins list\` shows every id)`,
      });
    }
  }

  // Ordered once: buildSnapshot sorts again, but an already sorted array costs its sort n - 1 comparisons.
  const order = orderDecided(decided);
  const snapshot = yield* buildSnapshotSteps({
    decided: order,
    profile: config.plugins.profile,
    warnings,
    ...(cache !== undefined ? { buildCache: cache } : {}),
  });
  const settings = new Map<string, Readonly<Record<string, unknown>>>();
  for (const d of order) {
    if (d.settings !== null && (d.state === 'enabled' || d.state === 'unavailable')) settings.set(d.admitted.id, d.settings);
  }
  return { snapshot, settings, trace: Object.freeze(order), keptManifests };
}

/** The policy as one string, so the build cache can tell whether an admission still holds. */
function policyKeyOf(policy: AdmissionPolicy): string {
  const bundled = [...policy.bundledIds].map(([id, { required }]) => `${id}${required ? '!' : ''}`);
  return JSON.stringify([policy.uid, policy.allow, bundled]);
}
