import { resolve } from 'node:path';
import type { ConfigProblem, ConfigSource, RuntimeConfig } from '@trellis/config';
import {
  buildPluginRegistrySnapshot,
  explainPlugin,
  prepareRegistry,
  resolveDiscoveryRoots,
  type PluginExplanation,
  type PluginRegistryResult,
  type PluginRegistrySnapshot,
  type CommandLineSwitches,
  type SnapshotEntry,
} from '@trellis/registry';
import { createResourceCatalog, type ResourceCatalog } from '@trellis/catalog';
import {
  createBundledImplementation,
  createToolRuntime,
  type ApprovalHook,
  type ExecutionHook,
  type LifecycleState,
  type PluginImplementation,
  type ToolRuntime,
} from '@trellis/runtime';
import { silentLogger, type HostServices, type Logger, type ProfileName } from '@trellis/sdk';
import { BUNDLED_PLUGINS, EMBEDDED_PROFILES, EMBEDDED_TOOL_OVERRIDES } from './bundled.gen.ts';
import { applyCommandLineSwitches } from './applyCommandLineSwitches.ts';
import { ConfigError } from './errors.ts';
import { loadConfig, resolveHostPaths } from './loadConfig.ts';

/** Options of {@link assemble}. Everything defaults to what the `trellis` command would use. */
export interface AssembleOptions {
  /** A runtime.toml to use instead of the lookup order (like `--config`). */
  readonly configPath?: string;
  /** The workspace folder (like `--workspace`); default: the current directory. */
  readonly workspace?: string;
  /** Overrides `[plugins] profile` (like `--profile`). */
  readonly profile?: ProfileName;
  /** Extra plugin roots with the highest priority (like `--plugin-path`). */
  readonly pluginPaths?: readonly string[];
  /** The environment for config lookup, `${VAR}` expansion, `requires_env` and tools; default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The user's home folder; default `os.homedir()`. */
  readonly home?: string;
  readonly logger?: Logger;
  /** Asked before each call that needs approval; without it such calls end with `APPROVAL_DENIED`. */
  readonly approve?: ApprovalHook;
  /** Execution hooks attached from the start. */
  readonly hooks?: readonly ExecutionHook[];
  /**
   * Start external process/HTTP plugins that declare no `[[tools]]`, so the tools they report
   * (get_tools, GET /tools) are in the catalog. Default true.
   */
  readonly discoverExternalTools?: boolean;
  /** `--allow/--enable/--disable` of one run: applied over the config as its highest layer. */
  readonly commandLine?: CommandLineSwitches;
}

/** A running Trellis host: what `assemble()` returns. */
export interface Assembly {
  readonly config: RuntimeConfig;
  /** Where the config came from (`flag`, `env`, `workspace`, `user`, `embedded`) and its path. */
  readonly configSource: { readonly source: ConfigSource; readonly path?: string };
  /** Config warnings (unknown keys and the like); errors make `assemble` throw a `ConfigError`. */
  readonly configWarnings: readonly ConfigProblem[];
  readonly workspace: string;
  readonly snapshot: PluginRegistrySnapshot;
  /** The registry's full result: snapshot, resolved settings and the decision trace. */
  readonly registry: PluginRegistryResult;
  readonly catalog: ResourceCatalog;
  readonly runtime: ToolRuntime;
  /** Every candidate for an id with its admission checks and decision trace. */
  explain(id: string): PluginExplanation;
  /** Lifecycle of an enabled plugin's implementation (`unloaded` until first use). */
  lifecycle(id: string): { state: LifecycleState; lastError?: string } | undefined;
  /** Shuts every plugin down (external processes included) and closes the audit log. */
  dispose(): Promise<void>;
}

/**
 * Builds a Trellis host: config → registry snapshot → catalog → runtime. Throws `ConfigError`
 * when the config has errors (each one listed); everything else that can go wrong is reported in
 * the snapshot or as tool outcomes.
 */
export async function assemble(options: AssembleOptions = {}): Promise<Assembly> {
  const env = options.env ?? process.env;
  const { workspace, home } = resolveHostPaths({ workspace: options.workspace, home: options.home, env });
  const logger = options.logger ?? silentLogger;

  const loaded = await loadConfig({ configPath: options.configPath, env, workspace, home });
  if (loaded.errors.length > 0 || loaded.value === undefined) throw new ConfigError(loaded.errors);
  let config = loaded.value;
  if (options.profile !== undefined) config = { ...config, plugins: { ...config.plugins, profile: options.profile } };
  if (options.commandLine !== undefined) config = applyCommandLineSwitches(config, options.commandLine);

  const roots = resolveDiscoveryRoots({
    config,
    pluginPaths: options.pluginPaths ?? [],
    env,
    workspace,
    home,
    ...(loaded.path !== undefined ? { baseDir: resolve(loaded.path, '..') } : {}),
  });
  await prepareRegistry({ roots, config });
  const registry = buildPluginRegistrySnapshot({ config, roots, bundled: BUNDLED_PLUGINS, profiles: EMBEDDED_PROFILES, env, ...(options.commandLine ? { commandLine: options.commandLine } : {}) });
  const { snapshot } = registry;

  let catalog = createResourceCatalog({ snapshot, bundled: BUNDLED_PLUGINS, overrides: EMBEDDED_TOOL_OVERRIDES, config });

  const host: HostServices = {
    plugins: () => snapshot.plugins,
    explainPlugin: (id) => explainPlugin(registry, id),
    searchTools: (query, searchOptions) => catalog.search(query, searchOptions),
  };

  const entries = new Map<string, SnapshotEntry>();
  for (const entry of snapshot.plugins) if (entry.state === 'enabled') entries.set(entry.id, entry);
  const bundledById = new Map(BUNDLED_PLUGINS.map((d) => [d.manifest.id, d]));
  const implementations = new Map<string, PluginImplementation>();
  // The out-of-process adapters load only when an external plugin is enabled.
  const external = [...entries.values()].some((entry) => !entry.bundled) ? await import('@trellis/runtime/external') : undefined;

  const implementationFor = (pluginId: string): PluginImplementation | undefined => {
    const existing = implementations.get(pluginId);
    if (existing) return existing;
    const entry = entries.get(pluginId);
    if (entry === undefined) return undefined;
    const settings = registry.settings.get(pluginId) ?? {};
    let made: PluginImplementation | undefined;
    if (entry.bundled) {
      const descriptor = bundledById.get(pluginId);
      if (descriptor === undefined) return undefined;
      made = createBundledImplementation({ descriptor, settings, workspace: { root: workspace }, env, logger, host });
    } else if (external !== undefined && entry.manifest?.runtime !== undefined && entry.pluginDir !== null) {
      const overrides = config.plugins.entries[pluginId];
      made = external.createExternalImplementation(
        { id: pluginId, manifest: entry.manifest, pluginDir: entry.pluginDir },
        { env, logger, workspace, ...(overrides !== undefined ? { overrides } : {}) },
      );
    }
    if (made) implementations.set(pluginId, made);
    return made;
  };

  if (options.discoverExternalTools ?? true) {
    for (const entry of entries.values()) {
      const runtimeType = entry.manifest?.runtime?.type;
      if (entry.bundled || (runtimeType !== 'process' && runtimeType !== 'http') || (entry.manifest?.tools.length ?? 0) > 0) continue;
      const implementation = implementationFor(entry.id);
      if (implementation === undefined) continue;
      await implementation.start();
      const tools = implementation.discoveredTools?.();
      if (tools !== undefined && tools.length > 0) catalog = catalog.withDiscoveredTools(entry.id, tools);
    }
  }

  const runtime = createToolRuntime({
    catalog,
    implementations: implementationFor,
    config,
    logger,
    ...(options.approve ? { approve: options.approve } : {}),
    ...(options.hooks ? { hooks: options.hooks } : {}),
  });

  let disposed: Promise<void> | undefined;
  return {
    config,
    configSource: { source: loaded.source, ...(loaded.path !== undefined ? { path: loaded.path } : {}) },
    configWarnings: loaded.warnings,
    workspace,
    snapshot,
    registry,
    get catalog() {
      return catalog;
    },
    runtime,
    explain: (id) => explainPlugin(registry, id),
    lifecycle(id) {
      const implementation = implementations.get(id);
      if (implementation === undefined) return entries.has(id) ? { state: 'unloaded' } : undefined;
      const lastError = implementation.lastError?.();
      return { state: implementation.state(), ...(lastError !== undefined ? { lastError } : {}) };
    },
    dispose() {
      disposed ??= (async () => {
        await runtime.dispose();
        await Promise.allSettled([...implementations.values()].map((i) => i.dispose()));
      })();
      return disposed;
    },
  };
}
