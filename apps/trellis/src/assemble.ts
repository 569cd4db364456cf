import { resolve } from 'node:path';
import type { ConfigLayerReport, ConfigProblem, ConfigSource, RuntimeConfig, WorkspaceTrust } from '@trellis/config';
import {
  buildPluginRegistrySnapshot,
  buildPluginRegistrySnapshotInSteps,
  explainPlugin,
  prepareRegistry,
  resolveDiscoveryRoots,
  type PluginExplanation,
  type PluginRegistryResult,
  type RegistryBuildCache,
  type PluginRegistrySnapshot,
  type CommandLineSwitches,
  type SnapshotEntry,
} from '@trellis/registry';
import { createResourceCatalog, createResourceCatalogInSteps, type CatalogBuildCache, type ResourceCatalog } from '@trellis/catalog';
import {
  createBundledImplementation,
  createFileAuditLog,
  createToolRuntime,
  withAuditFields,
  type ApprovalHook,
  type ExecutionHook,
  type LifecycleState,
  type PluginImplementation,
  type PrecompiledValidator,
  type SchemaValidatorCache,
  type ToolRuntime,
} from '@trellis/runtime';
import { silentLogger, type HostServices, type LifecycleTransition, type Logger, type ProfileName, type ToolSpec } from '@trellis/sdk';
import { Listeners, createKeepAliveHost, loadOnce, runSteps, runStepsPausing, type Pause, type Steps } from '@trellis/sdk/internal';
import { BUNDLED_PLUGINS, EMBEDDED_PROFILES, EMBEDDED_TOOL_OVERRIDES } from './bundled.gen.ts';
import { BUNDLED_INPUT_VALIDATORS } from './bundledValidators.gen.ts';
import { applyCommandLineSwitches } from './applyCommandLineSwitches.ts';
import { ConfigError } from './errors.ts';
import { resolveConfigHome, trustStorePath } from '@trellis/config/lookup';
import { loadConfig, resolveHostPaths } from './loadConfig.ts';
import { describePluginStatus, type AssemblyStatus } from './status/pluginStatus.ts';
import type { createExternalImplementation } from '@trellis/runtime/external';
import type { ImplementationPool } from './reload/ImplementationPool.ts';
import { fingerprintPlugin } from './reload/fingerprintPlugin.ts';
import { planEarlyStarts, type ServingGeneration } from './reload/planEarlyStarts.ts';

// The out-of-process adapters, loaded on first use (only when an external plugin is enabled).
const loadExternalAdapters = loadOnce(() => import('@trellis/runtime/external'));

/** The out-of-process adapters, imported only when an external plugin is enabled. */
type ExternalAdapters = { readonly createExternalImplementation: typeof createExternalImplementation };

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
  /**
   * Secrets (API keys, tokens) read like environment variables — by `${VAR}` in the config,
   * `requires_env`, bundled tools and `pass_env` grants — layered over `env`, without ever being
   * in the process environment. Pass keys here (from a file or a secret manager) instead of
   * starting the host with them in its environment: see docs/embedding.md, "Secrets".
   */
  readonly secrets?: Readonly<Record<string, string>>;
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
  /**
   * Bundled plugins with a tool source (the `mcp` bridge) are started with the external ones (see
   * `discoverExternalTools`). `false` (default): they answer from their cache and contact only what
   * they have never seen; `true`: they contact everything now (doctor, long-running hosts).
   */
  readonly refreshToolSources?: boolean;
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
  /** Every config layer, lowest first, with whether it applied and why not. */
  readonly configLayers: readonly ConfigLayerReport[];
  /**
   * Whether the user trusts the workspace (`trellis trust`). Untrusted: its `.trellis/runtime.toml`
   * is not applied, its plugins are disabled (`WORKSPACE_UNTRUSTED`), and bundled plugins see
   * `workspace.trusted === false` (a skill source must not run its skills in process).
   */
  readonly workspaceTrust: WorkspaceTrust;
  readonly workspace: string;
  /** The environment it was assembled with (what `requires_env` and plugins read). */
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly snapshot: PluginRegistrySnapshot;
  /** The registry's full result: snapshot, resolved settings and the decision trace. */
  readonly registry: PluginRegistryResult;
  readonly catalog: ResourceCatalog;
  readonly runtime: ToolRuntime;
  /** Every candidate for an id with its admission checks and decision trace. */
  explain(id: string): PluginExplanation;
  /** Lifecycle of an enabled plugin's implementation (`unloaded` until first use). */
  lifecycle(
    id: string,
  ): { state: LifecycleState; lastError?: string; problems?: ReadonlyArray<{ code: string; message: string }> } | undefined;
  /**
   * Starts an enabled plugin now (spawn and handshake for process plugins, initialize for HTTP);
   * resolves when it is up or has failed (see `lifecycle`). Unknown or not enabled ids do nothing.
   */
  startPlugin(id: string, signal?: AbortSignal): Promise<void>;
  /**
   * One health check of a started external plugin (`health_check` / `GET /health`), reporting only;
   * `undefined` when its adapter has none (script plugins) or the id is not enabled.
   */
  checkPluginHealth(id: string, signal: AbortSignal): Promise<{ healthy: boolean; message?: string } | undefined>;
  /**
   * Calls `listener` whenever `catalog` is replaced because a running plugin's tools changed (an MCP
   * server's `tools/list_changed`, an external plugin reporting other tools after a restart);
   * returns the unsubscribe function.
   */
  onCatalogChanged(listener: (catalog: ResourceCatalog) => void): () => void;
  /**
   * Every plugin with its registry state and, for enabled ones, its lifecycle (state, since when,
   * last error, restarts, last health check, each bridged MCP server's), as plain JSON. Cheap:
   * it starts nothing. See docs/embedding.md, "Health and lifecycle".
   */
  status(): AssemblyStatus;
  /**
   * Calls `listener` on every lifecycle transition of a plugin or of one of its parts (an MCP
   * server: `part` is its name): active → error → recovering → active, or → disabled. Returns the
   * unsubscribe function. A listener that throws is logged and changes nothing.
   */
  onLifecycleChange(listener: (transition: LifecycleTransition) => void): () => void;
  /** Shuts every plugin down (external processes included) and closes the audit log. */
  dispose(): Promise<void>;
  /**
   * The same as `dispose()`, under the name embedders expect: stops every plugin process (each
   * gets `shutdown` and end of input, then SIGTERM to its group after a grace period, then
   * SIGKILL) and resolves when all are gone. Idempotent. Call it from your SIGINT/SIGTERM/SIGHUP
   * handlers; see docs/embedding.md for the `process.on('exit')` safety net behind it.
   */
  close(): Promise<void>;
}

/**
 * Builds a Trellis host: config → registry snapshot → catalog → runtime. Throws `ConfigError`
 * when the config has errors (each one listed); everything else that can go wrong is reported in
 * the snapshot or as tool outcomes.
 */
export async function assemble(options: AssembleOptions = {}): Promise<Assembly> {
  return (await assembleGeneration(options, {})).assembly;
}

/** What a live host hands each generation it builds (see reload/startLiveHost.ts). */
export interface GenerationInternals {
  /** The generation number, written into every audit line. */
  readonly generation?: number;
  /** Implementations kept across generations: an unchanged plugin's running implementation is reused. */
  readonly pool?: ImplementationPool;
  /** What bundled plugins see of the host; a live host passes services that read its current generation. */
  readonly hostServices?: HostServices;
  /**
   * Called once the snapshot is built and before any plugin is started or leased; a live host
   * raises its request barrier here.
   */
  readonly onPlanned?: (plan: { readonly snapshot: PluginRegistrySnapshot; readonly fingerprints: ReadonlyMap<string, string> }) => void;
  /**
   * Asked after every unit of the build's work (a manifest walked or admitted, a plugin's tools
   * described, a fingerprint): a live host passes a pacer (`createPacer`) that lets the event loop
   * turn every millisecond or so, so calls it serves meanwhile wait for one slice at most, not for
   * the whole build. Default: no pause.
   */
  readonly pause?: Pause;
  /** The schema validator cache every generation's runtime shares (compiled input schemas carry over). */
  readonly loadValidators?: () => Promise<SchemaValidatorCache>;
  /** What earlier generations' builds read, parsed, admitted and decided: a reload redoes only what changed. */
  readonly buildCache?: RegistryBuildCache;
  /** The tools earlier generations' catalogs described: a reload describes only what changed. */
  readonly catalogCache?: CatalogBuildCache;
  /**
   * A reload: the generation serving now. With a `pool`, running plugins whose entry table changed
   * get their new implementation started as soon as the config is read (see `planEarlyStarts`).
   */
  readonly serving?: ServingGeneration;
  /**
   * Use this config instead of reading the config files: a live host whose new config cannot be
   * used builds with its last good one, so changes to the plugin files still apply.
   */
  readonly config?: LoadedConfig;
}

/** The config files as one generation read them (`loadConfig`'s result, without errors). */
export type LoadedConfig = Awaited<ReturnType<typeof loadConfig>>;

/** An assembly and, per enabled plugin, the fingerprint a reload compares to tell changed plugins apart. */
export interface AssembledGeneration {
  readonly assembly: Assembly;
  /** Enabled plugin id → fingerprint of what its implementation is made from (manifest, resolved config, grants). */
  readonly fingerprints: ReadonlyMap<string, string>;
  /** What a live host watches for this generation: the config files that can take part and the plugin roots. */
  readonly sources: { readonly configFiles: readonly string[]; readonly pluginRoots: readonly string[] };
  /**
   * A reload: plugins that report their tools and were still starting when the build stopped
   * waiting for them (`[runtime] reload_queue_timeout`); each lists its tools once it answers.
   */
  readonly stillStarting: readonly string[];
  /** The config it was built from, for a later build to fall back to (see `GenerationInternals.config`). */
  readonly config: LoadedConfig;
}

let bundledValidators: ReadonlyMap<object, PrecompiledValidator> | undefined;
/** The bundled tools' input validators compiled by the build, by schema object; one map for every generation. */
function bundledPrecompiled(): ReadonlyMap<object, PrecompiledValidator> {
  return (bundledValidators ??= new Map(
    BUNDLED_INPUT_VALIDATORS.map(([p, t, validator]) => [BUNDLED_PLUGINS[p]!.tools[t]!.inputSchema, validator]),
  ));
}

/** {@link assemble} with the hooks a live host needs; `assemble()` is this with none. */
export async function assembleGeneration(options: AssembleOptions, internals: GenerationInternals): Promise<AssembledGeneration> {
  const env = options.secrets === undefined ? (options.env ?? process.env) : { ...(options.env ?? process.env), ...options.secrets };
  const { workspace, home } = resolveHostPaths({ workspace: options.workspace, home: options.home, env });
  const logger = options.logger ?? silentLogger;

  const { pause } = internals;
  const loaded =
    internals.config ??
    (await loadConfig({ configPath: options.configPath, env, workspace, home, ...(pause !== undefined ? { pause } : {}) }));
  if (loaded.errors.length > 0 || loaded.value === undefined) throw new ConfigError(loaded.errors);
  let config = loaded.value;
  if (options.profile !== undefined) config = { ...config, plugins: { ...config.plugins, profile: options.profile } };
  if (options.commandLine !== undefined) config = applyCommandLineSwitches(config, options.commandLine);

  const makeExternal = (adapters: ExternalAdapters, entry: SnapshotEntry): PluginImplementation | undefined => {
    if (entry.manifest?.runtime === undefined || entry.pluginDir === null) return undefined;
    const overrides = config.plugins.entries[entry.id];
    return adapters.createExternalImplementation(
      { id: entry.id, manifest: entry.manifest, pluginDir: entry.pluginDir },
      { env, logger, workspace, ...(overrides !== undefined ? { overrides } : {}) },
    );
  };
  // A reload: running plugins whose entry table changed start their new child now, beside the
  // build of the rest of the generation (see planEarlyStarts).
  const { pool, serving } = internals;
  const early =
    pool === undefined || serving === undefined
      ? []
      : await planEarlyStarts({
          serving,
          config,
          trusted: loaded.workspaceTrust.trusted,
          refreshToolSources: options.refreshToolSources === true,
        });
  if (early.length > 0 && pool !== undefined) {
    const adapters = await loadExternalAdapters();
    for (const { entry, fingerprint } of early) pool.prestart(entry.id, fingerprint, () => makeExternal(adapters, entry));
  }
  await pause?.();
  const roots = resolveDiscoveryRoots({
    config,
    pluginPaths: options.pluginPaths ?? [],
    env,
    workspace,
    home,
    ...(loaded.path !== undefined ? { baseDir: resolve(loaded.path, '..') } : {}),
    workspaceTrusted: loaded.workspaceTrust.trusted,
    workspaceReal: loaded.workspaceTrust.real,
  });
  await prepareRegistry({ roots, config });
  const registryOptions = {
    config,
    roots,
    bundled: BUNDLED_PLUGINS,
    profiles: EMBEDDED_PROFILES,
    env,
    ...(options.commandLine ? { commandLine: options.commandLine } : {}),
    ...(internals.buildCache !== undefined ? { buildCache: internals.buildCache } : {}),
  };
  const registry =
    pause !== undefined ? await buildPluginRegistrySnapshotInSteps(registryOptions, pause) : buildPluginRegistrySnapshot(registryOptions);
  const { snapshot } = registry;
  const catalogOptions = {
    snapshot,
    bundled: BUNDLED_PLUGINS,
    overrides: EMBEDDED_TOOL_OVERRIDES,
    config,
    ...(internals.catalogCache !== undefined ? { buildCache: internals.catalogCache } : {}),
  };
  let catalog = pause !== undefined ? await createResourceCatalogInSteps(catalogOptions, pause) : createResourceCatalog(catalogOptions);
  const host: HostServices = internals.hostServices ?? {
    plugins: () => snapshot.plugins,
    explainPlugin: (id) => explainPlugin(registry, id, config),
    searchTools: (query, searchOptions) => catalog.search(query, searchOptions),
  };

  const entries = new Map<string, SnapshotEntry>();
  for (const entry of snapshot.plugins) if (entry.state === 'enabled') entries.set(entry.id, entry);
  const bundledById = new Map(BUNDLED_PLUGINS.map((d) => [d.manifest.id, d]));
  const implementations = new Map<string, PluginImplementation>();
  // The out-of-process adapters load only when an external plugin is enabled.
  const external = [...entries.values()].some((entry) => !entry.bundled) ? await loadExternalAdapters() : undefined;

  function* fingerprintSteps(): Steps<Map<string, string>> {
    const out = new Map<string, string>();
    for (const entry of entries.values()) {
      if (out.size > 0) yield;
      out.set(
        entry.id,
        fingerprintPlugin({
          entry,
          settings: registry.settings.get(entry.id) ?? {},
          overrides: config.plugins.entries[entry.id],
          trusted: loaded.workspaceTrust.trusted,
          refreshToolSources: options.refreshToolSources === true,
        }),
      );
    }
    return out;
  }
  const fingerprints = pause !== undefined ? await runStepsPausing(fingerprintSteps(), pause) : runSteps(fingerprintSteps());

  // What plugins keep alive below their implementation: a live host's spans its generations.
  const keepAlive =
    internals.pool?.keepAlive ??
    createKeepAliveHost((error) =>
      logger.error(`closing a plugin's kept value failed: ${error instanceof Error ? error.message : String(error)}`),
    );

  const makeImplementation = (entry: SnapshotEntry): PluginImplementation | undefined => {
    const pluginId = entry.id;
    const settings = registry.settings.get(pluginId) ?? {};
    const overrides = config.plugins.entries[pluginId];
    let made: PluginImplementation | undefined;
    if (entry.bundled) {
      const descriptor = bundledById.get(pluginId);
      if (descriptor === undefined) return undefined;
      made = createBundledImplementation({
        descriptor,
        settings,
        workspace: { root: workspace, trusted: loaded.workspaceTrust.trusted },
        env,
        logger,
        host,
        ...(descriptor.dynamicTools === true ? { toolSourceMode: options.refreshToolSources === true ? 'refresh' : 'cached' } : {}),
        keepAlive: keepAlive.forPlugin(pluginId),
        ...(overrides?.max_restarts !== undefined ? { maxRestarts: overrides.max_restarts } : {}),
      });
    } else if (external !== undefined) {
      made = makeExternal(external, entry);
    }
    return made;
  };

  const implementationFor = (pluginId: string): PluginImplementation | undefined => {
    const existing = implementations.get(pluginId);
    if (existing) return existing;
    const entry = entries.get(pluginId);
    if (entry === undefined) return undefined;
    let made =
      pool === undefined
        ? makeImplementation(entry)
        : pool.lease(pluginId, fingerprints.get(pluginId) ?? '', () => makeImplementation(entry));
    if (made && !entry.bundled) made = watchDiscoveredTools(made);
    if (made) {
      implementations.set(pluginId, made);
      const unsubscribe = made.onLifecycleChange?.(notifyLifecycleChange);
      if (unsubscribe !== undefined) unsubscribers.push(unsubscribe);
    }
    return made;
  };
  const lifecycleListeners = new Listeners<LifecycleTransition>((error) =>
    logger.error(`a lifecycle listener threw: ${error instanceof Error ? error.message : String(error)}`),
  );
  const notifyLifecycleChange = (transition: LifecycleTransition): void => lifecycleListeners.emit(transition);

  // One signal for every way the offered tools change: a bundled tool source's change event, or an
  // external plugin that reports other tools than before.
  const catalogListeners = new Listeners<ResourceCatalog>((error) =>
    logger.error(`a catalog-changed listener threw: ${error instanceof Error ? error.message : String(error)}`),
  );
  const unsubscribers: Array<() => void> = [];
  const notifyCatalogChanged = (): void => catalogListeners.emit(catalog);
  // The catalog changes when a running external plugin reports other tools than before (get_tools
  // after a restart). Checked after each of its calls: an identity compare, content only on change.
  const seenTools = new Map<string, readonly ToolSpec[] | undefined>();
  const noteDiscoveredTools = (pluginId: string, tools: readonly ToolSpec[] | undefined): void => {
    const before = seenTools.get(pluginId);
    if (tools === undefined || tools === before) return;
    seenTools.set(pluginId, tools);
    if (before !== undefined && JSON.stringify(before) === JSON.stringify(tools)) return;
    if (before === undefined && tools.length === 0) return;
    catalog = catalog.withDiscoveredTools(pluginId, tools);
    if (before === undefined) return;
    notifyCatalogChanged();
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

  internals.onPlanned?.({ snapshot, fingerprints });
  // A reload (not the first generation): plugins may give parts they gave up a fresh start.
  if (internals.pool !== undefined && (internals.generation ?? 1) > 1) keepAlive.reloaded();

  // A reload: take over every unchanged plugin that is running in the generation before, now, so
  // disposing that generation does not stop it.
  if (internals.pool !== undefined) {
    for (const [id, fingerprint] of fingerprints) if (internals.pool.has(id, fingerprint)) implementationFor(id);
  }

  const stillStarting: string[] = [];
  if (options.discoverExternalTools ?? true) {
    // Plugins whose tools are learned at run time are started now, together, and listed as each
    // answers: bundled ones (the mcp bridge) refreshed on every change they report, external
    // process/HTTP plugins whose manifest declares no [[tools]].
    const listing: Array<{ readonly id: string; readonly implementation: PluginImplementation; readonly list: () => void }> = [];
    for (const entry of entries.values()) {
      if (!entry.bundled || bundledById.get(entry.id)?.dynamicTools !== true) continue;
      const implementation = implementationFor(entry.id);
      if (implementation === undefined) continue;
      const list = (): void => void (catalog = catalog.withDiscoveredTools(entry.id, implementation.discoveredTools?.() ?? []));
      listing.push({ id: entry.id, implementation, list });
      const unsubscribe = implementation.onToolsChanged?.(() => {
        list();
        notifyCatalogChanged();
      });
      if (unsubscribe !== undefined) unsubscribers.push(unsubscribe);
    }
    for (const entry of entries.values()) {
      const runtimeType = entry.manifest?.runtime?.type;
      if (entry.bundled || (runtimeType !== 'process' && runtimeType !== 'http') || (entry.manifest?.tools.length ?? 0) > 0) continue;
      const implementation = implementationFor(entry.id);
      if (implementation === undefined) continue;
      listing.push({ id: entry.id, implementation, list: () => noteDiscoveredTools(entry.id, implementation.discoveredTools?.()) });
    }
    // A reload waits for them at most [runtime] reload_queue_timeout, like its blue-green starts: a
    // manifest may allow its handshake hours, and every later reload (one that stops a plugin made
    // world-writable, say) queues behind this one. One that answers later lists its tools then, and
    // the host's clients hear of it (list_changed). The first generation waits for all, as before.
    // A plugin a reload takes over while it is still starting (an earlier reload stopped waiting
    // for it) is not waited for again: it lists its tools when it answers.
    const reloading = internals.serving !== undefined;
    let waiting = true;
    const settled = new Set<string>();
    const awaited: Array<Promise<void>> = [];
    for (const item of listing) {
      const startingAlready = reloading && item.implementation.state() === 'initializing';
      const start = (async () => {
        // start() reports a failure through the plugin's state (and its calls), never by rejecting.
        await item.implementation.start().catch(() => undefined);
        settled.add(item.id);
        item.list();
        if (!waiting) notifyCatalogChanged();
      })();
      if (!startingAlready) awaited.push(start);
    }
    const limitMs = reloading ? config.runtime.reload_queue_timeout * 1000 : undefined;
    const all = Promise.all(awaited);
    let timer: NodeJS.Timeout | undefined;
    if (limitMs === undefined) await all;
    else await Promise.race([all, new Promise<void>((resolve) => (timer = setTimeout(resolve, limitMs)))]);
    clearTimeout(timer);
    waiting = false;
    for (const item of listing) if (!settled.has(item.id)) stillStarting.push(item.id);
  }

  const runtime = createToolRuntime({
    // Read through, so a catalog replaced by a tools-changed event is the one calls look up.
    catalog: { lookup: (name) => catalog.lookup(name) },
    implementations: implementationFor,
    config,
    logger,
    ...(internals.generation !== undefined && config.runtime.audit_log !== ''
      ? { auditLog: withAuditFields(createFileAuditLog({ path: config.runtime.audit_log, logger }), { generation: internals.generation }) }
      : {}),
    ...(options.approve ? { approve: options.approve } : {}),
    ...(options.hooks ? { hooks: options.hooks } : {}),
    ...(internals.loadValidators !== undefined ? { loadValidators: internals.loadValidators } : {}),
    // The bundled tools' input validators, compiled by the build: their first calls load no ajv.
    precompiled: bundledPrecompiled(),
    // An external plugin's schemas need ajv at run time: load it while the host is idle.
    preloadValidators: external !== undefined,
  });

  let disposed: Promise<void> | undefined;
  const dispose = (): Promise<void> => {
    disposed ??= (async () => {
      for (const unsubscribe of unsubscribers) unsubscribe();
      catalogListeners.clear();
      lifecycleListeners.clear();
      await runtime.dispose();
      await Promise.allSettled([...implementations.values()].map((i) => i.dispose()));
    })();
    return disposed;
  };
  const assembly: Assembly = {
    config,
    configSource: { source: loaded.source, ...(loaded.path !== undefined ? { path: loaded.path } : {}) },
    configWarnings: loaded.warnings,
    configLayers: loaded.layers ?? [],
    workspaceTrust: loaded.workspaceTrust,
    workspace,
    env,
    snapshot,
    registry,
    get catalog() {
      return catalog;
    },
    runtime,
    explain: (id) => explainPlugin(registry, id, config),
    lifecycle(id) {
      const implementation = implementations.get(id);
      if (implementation === undefined) return entries.has(id) ? { state: 'unloaded' } : undefined;
      const lastError = implementation.lastError?.();
      const problems = implementation.problems?.() ?? [];
      return {
        state: implementation.state(),
        ...(lastError !== undefined ? { lastError } : {}),
        ...(problems.length > 0 ? { problems } : {}),
      };
    },
    status() {
      return {
        profile: snapshot.profile,
        plugins: snapshot.plugins.map((entry) =>
          describePluginStatus(entry, entry.state === 'enabled' ? implementations.get(entry.id) : undefined),
        ),
      };
    },
    onLifecycleChange(listener) {
      return lifecycleListeners.add(listener);
    },
    onCatalogChanged(listener) {
      return catalogListeners.add(listener);
    },
    async startPlugin(id, signal) {
      await implementationFor(id)?.start(signal);
    },
    async checkPluginHealth(id, signal) {
      const implementation = implementationFor(id);
      if (implementation?.checkHealth === undefined) return undefined;
      return implementation.checkHealth(signal);
    },
    dispose,
    close: dispose,
  };
  const configFiles = new Set<string>();
  for (const layer of loaded.layers ?? []) if (layer.path !== undefined && layer.path !== '') configFiles.add(layer.path);
  configFiles.add(resolve(workspace, '.trellis', 'runtime.toml'));
  const configHome = resolveConfigHome({ env, home });
  configFiles.add(resolve(configHome, 'runtime.toml'));
  // Revoking a workspace's trust (`trellis trust --revoke`) must stop its config and plugins at once, like an edit.
  configFiles.add(trustStorePath(configHome));
  const pluginRoots = roots.flatMap((root) => (root.path === null ? [] : [root.path]));
  return { assembly, fingerprints, sources: { configFiles: [...configFiles], pluginRoots }, stillStarting, config: loaded };
}
