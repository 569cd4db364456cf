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
import { silentLogger, type HostServices, type Logger, type ProfileName, type ToolSpec } from '@trellis/sdk';
import { BUNDLED_PLUGINS, EMBEDDED_PROFILES, EMBEDDED_TOOL_OVERRIDES } from './bundled.gen.ts';
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
  /**
   * Calls `listener` after `catalog` was replaced because the offered tools changed (an external
   * plugin reported a different tool list after a restart); returns a function that unsubscribes.
   */
  onCatalogChange(listener: () => void): () => void;
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

  const roots = resolveDiscoveryRoots({
    config,
    pluginPaths: options.pluginPaths ?? [],
    env,
    workspace,
    home,
    ...(loaded.path !== undefined ? { baseDir: resolve(loaded.path, '..') } : {}),
  });
  await prepareRegistry({ roots, config });
  const registry = buildPluginRegistrySnapshot({ config, roots, bundled: BUNDLED_PLUGINS, profiles: EMBEDDED_PROFILES, env });
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
        { env, logger, ...(overrides !== undefined ? { overrides } : {}) },
      );
    }
    if (made && !entry.bundled) made = watchDiscoveredTools(made);
    if (made) implementations.set(pluginId, made);
    return made;
  };

  // The catalog changes when a running external plugin reports other tools than before (get_tools
  // after a restart). Checked after each of its calls: an identity compare, content only on change.
  const catalogListeners = new Set<() => void>();
  const seenTools = new Map<string, readonly ToolSpec[] | undefined>();
  const noteDiscoveredTools = (pluginId: string, tools: readonly ToolSpec[] | undefined): void => {
    const before = seenTools.get(pluginId);
    if (tools === undefined || tools === before) return;
    seenTools.set(pluginId, tools);
    if (before !== undefined && JSON.stringify(before) === JSON.stringify(tools)) return;
    if (before === undefined && tools.length === 0) return;
    catalog = catalog.withDiscoveredTools(pluginId, tools);
    if (before === undefined) return;
    for (const listener of [...catalogListeners]) {
      try {
        listener();
      } catch (error) {
        logger.warn('a catalog change listener failed', { error: error instanceof Error ? error.message : String(error) });
      }
    }
  };
  function watchDiscoveredTools(implementation: PluginImplementation): PluginImplementation {
    if (implementation.discoveredTools === undefined) return implementation;
    const read = implementation.discoveredTools.bind(implementation);
    const call = implementation.call.bind(implementation);
    return Object.assign(Object.create(implementation) as PluginImplementation, {
      call: async (request: Parameters<PluginImplementation['call']>[0]) => {
        const outcome = await call(request);
        noteDiscoveredTools(implementation.pluginId, read());
        return outcome;
      },
    });
  }

  if (options.discoverExternalTools ?? true) {
    for (const entry of entries.values()) {
      const runtimeType = entry.manifest?.runtime?.type;
      if (entry.bundled || (runtimeType !== 'process' && runtimeType !== 'http') || (entry.manifest?.tools.length ?? 0) > 0) continue;
      const implementation = implementationFor(entry.id);
      if (implementation === undefined) continue;
      await implementation.start();
      noteDiscoveredTools(entry.id, implementation.discoveredTools?.());
    }
  }

  const runtime = createToolRuntime({
    // Read through, so calls see the catalog after a plugin's tools changed.
    catalog: { lookup: (name) => catalog.lookup(name) },
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
    onCatalogChange(listener) {
      catalogListeners.add(listener);
      return () => catalogListeners.delete(listener);
    },
  };
}
