import { existsSync } from 'node:fs';
import type { RuntimeConfig } from '@trellis/config';
import type { Ajv } from 'ajv';
import type { parseManifest } from './parseManifest.ts';
import type { RootSpec } from './types.ts';

/**
 * The heavy libraries the registry needs only for some inputs: the manifest parser (smol-toml +
 * the zod schema) and ajv. They are needed when a filesystem root exists (a manifest may carry a
 * `config_schema`) or when the config patches some plugin's settings, and they load together
 * (`registryLibraries.ts`), once, however many callers ask at the same time. A host that runs on
 * bundled plugins and the default config starts without them; the pipeline itself stays synchronous.
 */
interface RegistryDependencies {
  parseManifest?: typeof parseManifest;
  Ajv?: typeof Ajv;
}

const loaded: RegistryDependencies = {};
let loading: Promise<void> | undefined;

/** Loads both libraries, once: concurrent callers share the one import. */
function loadRegistryLibraries(): Promise<void> {
  loading ??= import('./registryLibraries.ts').then(
    (m) => {
      loaded.parseManifest = m.parseManifest;
      loaded.Ajv = m.Ajv;
    },
    (error: unknown) => {
      loading = undefined;
      throw error;
    },
  );
  return loading;
}

/** What {@link prepareRegistry} should load for; leave both out to load everything. */
export interface PrepareRegistryOptions {
  /** The discovery roots about to be scanned: file roots that exist need the manifest parser. */
  readonly roots?: readonly RootSpec[];
  /** The config about to be used: settings patches need the validator. */
  readonly config?: RuntimeConfig;
}

/** True when the config patches some plugin's settings or entry config (those are validated). */
export function hasSettingsPatches(config: RuntimeConfig): boolean {
  if (Object.keys(config.runtime.tools).length > 0) return true;
  return Object.values(config.plugins.entries).some((entry) => entry.config !== undefined);
}

/**
 * Loads what `buildPluginRegistrySnapshot` (and `discoverCandidates`, `admitCandidate`, `decide`)
 * will need for these inputs. Await it once before building a snapshot; calling it again is cheap.
 */
export async function prepareRegistry(options: PrepareRegistryOptions = {}): Promise<void> {
  const everything = options.roots === undefined && options.config === undefined;
  const files = everything || (options.roots ?? []).some((root) => root.path !== null && existsSync(root.path));
  const settings = everything || (options.config !== undefined && hasSettingsPatches(options.config));
  if (files || settings) await loadRegistryLibraries();
}

/** A loaded dependency; a missing one is a bug in the caller (it skipped `prepareRegistry`). */
export function registryDependency<K extends keyof RegistryDependencies>(name: K): NonNullable<RegistryDependencies[K]> {
  const value = loaded[name];
  if (value === undefined) {
    throw new Error(`@trellis/registry: ${name} is not loaded; await prepareRegistry({ roots, config }) before building a snapshot`);
  }
  return value as NonNullable<RegistryDependencies[K]>;
}
