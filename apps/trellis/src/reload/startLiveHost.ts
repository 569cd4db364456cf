import { createCatalogBuildCache, type ResourceCatalog } from '@trellis/catalog';
import type { ExternalCandidateFacts, PluginRegistrySnapshot } from '@trellis/registry';
import type { ExecutionHook, InvokeOptions, LifecycleState, ToolRequest } from '@trellis/runtime';
import { ERROR_CODES, silentLogger, type HostServices, type ToolOutcome } from '@trellis/sdk';
import { Listeners, acquireSpawnHelper, createPacer, loadOnce, runStepsPausing, type Pause, type Steps } from '@trellis/sdk/internal';
import { createRegistryBuildCache, entryJson, explainPlugin } from '@trellis/registry';
import { assembleGeneration, type AssembledGeneration, type AssembleOptions, type Assembly, type LoadedConfig } from '../assemble.ts';
import { ConfigError } from '../errors.ts';
import { Generation } from './Generation.ts';
import { createImplementationPool } from './ImplementationPool.ts';
import { createReloadBarrier } from './ReloadBarrier.ts';
import { diffGenerations, isEmptyDiff, type GenerationDiff } from './diffGenerations.ts';
import { trackFreshCalls } from './freshCalls.ts';
import { liveAssemblyView } from './liveAssemblyView.ts';
import { isRunning } from './planEarlyStarts.ts';
import { watchSources, type SourceWatch } from './watchSources.ts';

/**
 * How long a reload's build holds the event loop at most before it lets calls being served run
 * (see `createPacer`): a call to a plugin the reload does not touch waits for one slice at most,
 * not for the build; and before a slice begins, the build waits (about one slice's time at most)
 * while a call that started moments ago is still waiting for its reply (see `trackFreshCalls`).
 * Smaller slices cost the build more turns of the loop.
 */
const BUILD_SLICE_MS = 1;

/** Options of {@link startLiveHost}: `assemble()`'s, plus how to watch. */
export interface LiveHostOptions extends AssembleOptions {
  /** Watch the config files and plugin roots and reload on change. Default true; false = reload only on `reload()`. */
  readonly watch?: boolean;
  /** Quiet time that ends a burst of file events before a reload starts, in ms. Default 150. */
  readonly debounceMs?: number;
}

/** What started a reload. */
export type ReloadTrigger = 'watch' | 'signal' | 'api';

/** A problem that made a reload be rejected. */
export interface ReloadProblem {
  readonly code: string;
  readonly message: string;
}

/** The result of one reload, as `reload()` resolves and `onReload` listeners receive it. */
export type ReloadResult =
  | {
      /** The next generation serves now. */
      readonly status: 'applied';
      readonly generation: number;
      readonly previous: number;
      readonly trigger: ReloadTrigger;
      /** ISO time the reload ended. */
      readonly at: string;
      /** From the start of the reload (or the first file event) to the new generation serving. */
      readonly durationMs: number;
      readonly changes: GenerationDiff;
      /**
       * Config warnings of the new generation (unknown keys and the like), and a `PLUGIN_LOAD_FAILED`
       * for each changed plugin whose new implementation did not start beside the old one.
       */
      readonly warnings: readonly ReloadProblem[];
      /**
       * The parts of the edit left out, to fix and save again: a config that cannot be used (the
       * generation keeps the last one that worked) and manifests that no longer validate (a plugin
       * that served keeps its last valid manifest; a new one is not admitted). Each would have
       * rejected the reload on its own; the rest of the edit applied.
       */
      readonly notApplied: readonly ReloadProblem[];
    }
  | {
      /** The config and plugins are the same as the serving generation's: nothing to do. */
      readonly status: 'unchanged';
      readonly generation: number;
      readonly trigger: ReloadTrigger;
      readonly at: string;
      readonly durationMs: number;
    }
  | {
      /** The new config or a manifest is invalid: the last good generation keeps serving. */
      readonly status: 'rejected';
      readonly generation: number;
      readonly trigger: ReloadTrigger;
      readonly at: string;
      readonly durationMs: number;
      readonly errors: readonly ReloadProblem[];
    };

/** A tool outcome with the generation whose runtime served it. */
export type LiveToolOutcome = ToolOutcome & { readonly generation: number };

/** One plugin in {@link LiveHostStatus}. */
export interface LivePluginStatus {
  readonly id: string;
  /** The registry's decision: `enabled`, `disabled`, `unavailable`, `rejected`, `shadowed`. */
  readonly state: string;
  /** Enabled plugins only: the implementation's lifecycle. */
  readonly lifecycle?: LifecycleState;
  readonly lastError?: string;
}

/** A snapshot of a live host for status output (`trellis status`, health endpoints). */
export interface LiveHostStatus {
  readonly generation: number;
  /** ISO time the current generation started serving. */
  readonly since: string;
  readonly lastReload?: ReloadResult;
  /** Calls in flight on every generation still serving some. */
  readonly callsInFlight: number;
  /** Generations retired but still finishing calls. */
  readonly draining: number;
  /**
   * Plugins whose calls wait for the swap now: those a reload adds, and changed ones that were not
   * running (empty between reloads; a changed running plugin is handed over without a wait).
   */
  readonly swapping: readonly string[];
  /** Calls waiting for the swap now. */
  readonly waiting: number;
  readonly watching: { readonly configFiles: readonly string[]; readonly pluginRoots: readonly string[] } | undefined;
  readonly plugins: readonly LivePluginStatus[];
}

/**
 * A long-running Trellis host that follows its config: it watches the config files and plugin
 * roots, builds a new generation on change, keeps unchanged plugins running across it, and swaps
 * catalog and runtime in one step. Calls go through `invoke` (or `assembly.runtime.invoke`).
 */
export interface LiveHost {
  /** The generation serving now (1 for the first). */
  readonly generation: number;
  /**
   * An `Assembly` that always reads the current generation: hand it to code that takes an assembly
   * (the MCP server, the agent). Its `runtime.invoke` is {@link LiveHost.invoke}; `dispose`/`close` close the host.
   */
  readonly assembly: Assembly;
  /** The current generation's catalog. */
  readonly catalog: ResourceCatalog;
  /** The current generation's snapshot. */
  readonly snapshot: PluginRegistrySnapshot;
  /**
   * Runs one call on the current generation; a call to a plugin a reload is adding (or changing
   * while it was not running) waits for the swap (at most `[runtime] reload_queue_timeout`, then
   * `RELOAD_TIMEOUT`). Never rejects.
   */
  invoke(request: ToolRequest, options?: InvokeOptions): Promise<LiveToolOutcome>;
  /** Attaches an execution hook to every generation, present and future; adding the same hook again does nothing. */
  addHook(hook: ExecutionHook): () => void;
  /** Reloads now (what a file change or SIGHUP does); resolves with the result. Reloads run one at a time. */
  reload(trigger?: ReloadTrigger): Promise<ReloadResult>;
  /** Calls `listener` with every reload's result; returns the unsubscribe function. */
  onReload(listener: (result: ReloadResult) => void): () => void;
  /** Calls `listener` when the offered catalog may have changed (a reload, or a running plugin's tools). */
  onCatalogChanged(listener: (catalog: ResourceCatalog) => void): () => void;
  /**
   * Hears the host's own warnings, ones no reload reports: today, that the spawn helper was lost
   * (its children were stopped and are started again by the host). `serve` and `run` print them.
   */
  onWarning(listener: (message: string) => void): () => void;
  /** Generation, last reload and per-plugin lifecycle, now. */
  status(): LiveHostStatus;
  /** Stops watching, waits for calls in flight, and stops every plugin process. Idempotent. */
  close(): Promise<void>;
}

/**
 * Starts a live host: assembles generation 1 (throws `ConfigError` like `assemble()` when the first
 * config is unusable), then watches its config files and plugin roots. A later bad edit never takes
 * it down: the last good generation keeps serving and the reload is `rejected` with the errors.
 */
export async function startLiveHost(options: LiveHostOptions = {}): Promise<LiveHost> {
  const logger = options.logger ?? silentLogger;
  const pool = createImplementationPool({ logger });
  const barrier = createReloadBarrier();
  const reloadListeners = new Listeners<ReloadResult>((error) =>
    logger.error(`a reload listener threw: ${error instanceof Error ? error.message : String(error)}`),
  );
  const catalogListeners = new Listeners<ResourceCatalog>((error) =>
    logger.error(`a catalog-changed listener threw: ${error instanceof Error ? error.message : String(error)}`),
  );
  const warningListeners = new Listeners<string>((error) =>
    logger.error(`a warning listener threw: ${error instanceof Error ? error.message : String(error)}`),
  );
  // Hooks added with addHook, each with the detachers of the generations it is attached to. They
  // are attached to a new generation at its swap, not when its build starts: a hook added (or
  // removed) while a build runs must hold for the generation that build makes. The hooks of
  // `options.hooks` are every generation's from the start and cannot be removed.
  const addedHooks = new Map<ExecutionHook, Array<() => void>>();
  const draining = new Set<Generation>();
  let lastReload: ReloadResult | undefined;
  let watch: SourceWatch | undefined;
  let sources: { configFiles: readonly string[]; pluginRoots: readonly string[] } | undefined;
  let closing: Promise<void> | undefined;
  let building: ReturnType<typeof pool.track> | undefined;
  // Children started early that no generation took, being stopped (see planEarlyStarts).
  let dropping: Promise<void> = Promise.resolve();
  const dropUnclaimed = (): Promise<void> => (dropping = Promise.all([dropping, pool.dropUnclaimed()]).then(() => undefined));

  // Bundled plugins (builtin-tools' list_plugins, explain_plugin, search) read the generation
  // serving now, also when their implementation was made by an earlier one.
  const hostServices: HostServices = {
    plugins: () => current.assembly.snapshot.plugins,
    explainPlugin: (id) => explainPlugin(current.assembly.registry, id, current.assembly.config),
    searchTools: (query, searchOptions) => current.assembly.catalog.search(query, searchOptions),
  };
  // One schema validator cache for every generation: a new generation's first calls find their
  // input schemas compiled (ajv's meta-schema alone costs tens of ms to compile again).
  const loadValidators = loadOnce(() => import('@trellis/runtime/validation').then((m) => m.createSchemaValidatorCache()));
  // What the last build read, admitted, decided and described: a reload parses only manifests whose
  // bytes changed, and takes over everything of a plugin whose files and config did not change.
  const buildCache = createRegistryBuildCache();
  const catalogCache = createCatalogBuildCache();
  // Every build's work, and the comparison after it, in slices of BUILD_SLICE_MS, in the gaps
  // between the calls being served (see trackFreshCalls).
  const freshCalls = trackFreshCalls();
  // One pacer per build: a build's first slice begins when the build does (the loop has just
  // turned: the debounce's timer, a signal), not one slice after the last build ended. A pacer for
  // the host's life would find its slice long over and pause at the build's first step, which
  // delays the early start of a changed plugin's child (planEarlyStarts) by a pause for nothing.
  const newPace = (): Pause =>
    createPacer(BUILD_SLICE_MS, {
      // A build that close() abandons has no calls to make way for.
      waitBeforeSlice: () => (closing === undefined ? freshCalls.whileFresh() : undefined),
    });
  const build = (
    number: number,
    pace: Pause,
    onPlanned?: Parameters<typeof assembleGeneration>[1]['onPlanned'],
    config?: LoadedConfig,
  ): Promise<AssembledGeneration> =>
    assembleGeneration(options, {
      ...(config !== undefined ? { config } : {}),
      generation: number,
      pool,
      hostServices,
      loadValidators,
      buildCache,
      catalogCache,
      pause: pace,
      ...(number > 1 ? { serving: current } : {}),
      ...(onPlanned !== undefined ? { onPlanned } : {}),
    });

  const first = await build(1, newPace());
  // The config of the last generation built whole, for a build to fall back to (see buildAndSwap).
  let lastGoodConfig = first.config;
  let current = new Generation(1, first.assembly, first.fingerprints, Date.now());
  buildCache.serving(servingFacts(first.assembly));
  sources = first.sources;
  let unfollowCatalog = followCatalog(current);

  function followCatalog(generation: Generation): () => void {
    return generation.assembly.onCatalogChanged((catalog) => catalogListeners.emit(catalog));
  }
  function notifyReload(result: ReloadResult): void {
    lastReload = result;
    reloadListeners.emit(result);
  }

  async function invoke(request: ToolRequest, invokeOptions?: InvokeOptions): Promise<LiveToolOutcome> {
    const pluginId = pluginOf(request.name);
    if (barrier.holds(pluginId)) {
      const timeoutSeconds = current.assembly.config.runtime.reload_queue_timeout;
      const passed = await barrier.wait(timeoutSeconds * 1000, invokeOptions?.signal);
      if (!passed) return refusedDuringReload(request.name, pluginId, timeoutSeconds, invokeOptions?.signal, current.number);
    }
    // A call that starts once the host closes is refused: close() waits for the calls in flight,
    // and a client that keeps calling would otherwise keep it waiting for ever.
    if (closing !== undefined) return refusedWhileClosing(request.name, current.number);
    const generation = current;
    const done = freshCalls.begin();
    const leave = generation.enter();
    try {
      const outcome = await generation.assembly.runtime.invoke(request, invokeOptions);
      return { ...outcome, generation: generation.number };
    } finally {
      done();
      leave();
    }
  }

  // ── reloading ──────────────────────────────────────────────────────────────────────────────
  let running: Promise<ReloadResult> | undefined;
  let queued: { trigger: ReloadTrigger; startedAt: number; promise: Promise<ReloadResult> } | undefined;

  function reload(trigger: ReloadTrigger = 'api', startedAt = performance.now()): Promise<ReloadResult> {
    if (closing !== undefined)
      return Promise.resolve(rejected(trigger, startedAt, [{ code: ERROR_CODES.ABORTED, message: 'the live host is closing' }]));
    // A reload the user asks for (SIGHUP, reload()) opens every manifest again: a write through a
    // shared memory map can leave a file's times as they were, which neither the watcher nor the
    // build cache's lstat can tell (see ManifestReadMemo).
    if (trigger !== 'watch') buildCache.readMemo.clear();
    if (running === undefined) {
      running = reloadOnce(trigger, startedAt).finally(() => (running = undefined));
      return running;
    }
    // One reload at a time; changes during one are picked up by one more after it.
    queued ??= {
      trigger,
      startedAt,
      promise: running.then(() => {
        const next = queued;
        queued = undefined;
        return reload(next?.trigger ?? trigger, next?.startedAt ?? startedAt);
      }),
    };
    return queued.promise;
  }

  async function reloadOnce(trigger: ReloadTrigger, startedAt: number): Promise<ReloadResult> {
    // What this build starts, so that close() can stop it mid-start (a handshake that never answers).
    const track = pool.track();
    building = track;
    try {
      return await buildAndSwap(trigger, startedAt);
    } finally {
      track.end();
      if (building === track) building = undefined;
      // Whatever came of it (a SIGHUP after a config folder was made again may change nothing), the
      // watch follows the sources' paths again: a watch follows the file it was set on, not its path.
      if (sources !== undefined && closing === undefined) watch?.update(sources);
    }
  }

  async function buildAndSwap(trigger: ReloadTrigger, startedAt: number): Promise<ReloadResult> {
    const before = current;
    const number = before.number + 1;
    const pace = newPace();
    let diff: GenerationDiff | undefined;
    // Changed plugins running in N: handed over blue-green (their new implementation starts beside
    // the old one before the swap, and their calls keep going to N meanwhile).
    let handOver: readonly string[] = [];
    const planned = ({ fingerprints }: { fingerprints: ReadonlyMap<string, string> }) => {
      diff = diffGenerations(before.fingerprints, fingerprints);
      handOver = diff.changed.filter((id) => isRunning(before.assembly.lifecycle(id)?.state));
      // Only calls that N cannot serve as the new config means wait: to an added plugin, and to a
      // changed one that is not running (its old implementation would only start to be replaced).
      barrier.raise([...diff.added, ...diff.changed.filter((id) => !handOver.includes(id))]);
    };
    // The errors of a config that cannot be used, when the build fell back to the last good one.
    let configRejected: readonly ReloadProblem[] | undefined;
    const refuse = async (errors: readonly ReloadProblem[]): Promise<ReloadResult> => {
      barrier.lower();
      await dropUnclaimed();
      const result = rejected(trigger, startedAt, errors);
      notifyReload(result);
      return result;
    };
    let built: AssembledGeneration;
    try {
      built = await build(number, pace, planned);
    } catch (error) {
      if (!(error instanceof ConfigError)) return refuse(problemsOf(error));
      configRejected = problemsOf(error);
      // The new config cannot be used: the plugin files are still judged, under the last good
      // config, so a plugin made world-writable (or given to another user) meanwhile is stopped
      // now rather than once the config is fixed. Anything else still waits for the fix.
      try {
        built = await build(number, pace, planned, lastGoodConfig);
      } catch {
        return refuse(configRejected);
      }
    }
    // A child started early under a fingerprint the build did not confirm serves nobody: stop it
    // (close() waits for that; the reload goes on meanwhile).
    void dropUnclaimed();
    const changes = diff ?? diffGenerations(before.fingerprints, built.fingerprints);
    // Manifests that stopped validating are the part of the edit that cannot apply: a plugin that
    // served keeps its last valid manifest (the build kept it), a new one is not admitted. They
    // hold nothing else back, so a plugin made unsafe meanwhile is still stopped.
    // With one, the reload is rejected unless what serves changed (a plugin or the config): what
    // the snapshot merely lists (the broken plugin's own entry, a warning it silences) waits for the fix.
    const broken = brokenManifests(before.assembly.snapshot, built.assembly);
    // The comparison pauses between entries, so close() may begin during it: check after it.
    const unchanged =
      isEmptyDiff(changes) &&
      (broken.length > 0
        ? sameConfig(before.assembly, built.assembly)
        : await runStepsPausing(sameServing(before.assembly, built.assembly), pace));
    if (closing !== undefined) {
      barrier.lower();
      await built.assembly.dispose();
      return rejected(trigger, startedAt, [{ code: ERROR_CODES.ABORTED, message: 'the live host closed during the reload' }]);
    }
    if (unchanged && (configRejected !== undefined || broken.length > 0)) {
      barrier.lower();
      await built.assembly.dispose();
      const result = rejected(trigger, startedAt, [...(configRejected ?? []), ...broken]);
      notifyReload(result);
      return result;
    }
    if (unchanged) {
      barrier.lower();
      await built.assembly.dispose();
      const result: ReloadResult = {
        status: 'unchanged',
        generation: before.number,
        trigger,
        at: new Date().toISOString(),
        durationMs: performance.now() - startedAt,
      };
      notifyReload(result);
      return result;
    }
    const warnings: ReloadProblem[] = built.assembly.configWarnings.map((w) => ({ code: w.code, message: w.message }));
    // The parts of the edit still to fix: a config that cannot be used (the build kept the last
    // one that worked) and manifests that stopped validating.
    const notApplied: ReloadProblem[] = [
      ...(configRejected ?? []).map((problem) => ({
        code: problem.code,
        message: `${problem.message} (generation ${number} keeps the last config that worked)`,
      })),
      ...broken,
    ];
    for (const id of built.stillStarting) {
      warnings.push({
        code: ERROR_CODES.PLUGIN_LOAD_FAILED,
        message: `plugin ${id}: still starting after [runtime] reload_queue_timeout (${built.assembly.config.runtime.reload_queue_timeout} s); generation ${number} serves without its tools and lists them once it answers its handshake`,
      });
    }
    if (handOver.length > 0) {
      // Blue-green: start (spawn and handshake) the new implementations now, while N's keep serving.
      // Bounded like a held call's wait: a new child slow to answer its handshake (a manifest may
      // allow it hours) must not hold every later reload; past the bound the swap goes ahead, and
      // the new generation's calls to that plugin wait for its start as they would for a lazy start.
      const limitSeconds = built.assembly.config.runtime.reload_queue_timeout;
      let timer: NodeJS.Timeout | undefined;
      const starts = Promise.all(handOver.map((id) => built.assembly.startPlugin(id)));
      const inTime = await Promise.race([
        starts.then(() => true),
        new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), limitSeconds * 1000))),
      ]);
      clearTimeout(timer);
      if (closing !== undefined) {
        barrier.lower();
        await built.assembly.dispose();
        return rejected(trigger, startedAt, [{ code: ERROR_CODES.ABORTED, message: 'the live host closed during the reload' }]);
      }
      for (const id of handOver) {
        const started = built.assembly.lifecycle(id);
        if (started === undefined || started.state === 'active') continue;
        if (!inTime && (started.state === 'initializing' || started.state === 'unloaded')) {
          warnings.push({
            code: ERROR_CODES.PLUGIN_LOAD_FAILED,
            message: `plugin ${id}: its new implementation was still starting after [runtime] reload_queue_timeout (${limitSeconds} s); generation ${number} serves it, and calls to it wait for that start`,
          });
          continue;
        }
        // Not worse than a lazy start that fails: the new config applies, and the plugin's restart
        // policy retries it (by then N has stopped the old child, should the two not run side by side).
        warnings.push({
          code: ERROR_CODES.PLUGIN_LOAD_FAILED,
          message: `plugin ${id}: its new implementation did not start beside the old one (${started.lastError ?? started.state}); generation ${number} serves it anyway and restarts it under [plugins.entries.${id}] max_restarts`,
        });
      }
    }
    for (const [hook, detachers] of addedHooks) detachers.push(built.assembly.runtime.addHook(hook));
    // The swap: catalog and runtime change together, in one assignment.
    current = new Generation(number, built.assembly, built.fingerprints, Date.now());
    buildCache.serving(servingFacts(built.assembly));
    lastGoodConfig = built.config; // the last good one again, when the build fell back to it
    barrier.lower();
    unfollowCatalog();
    unfollowCatalog = followCatalog(current);
    retire(before);
    sources = built.sources;
    watch?.update(built.sources);
    const result: ReloadResult = {
      status: 'applied',
      generation: number,
      previous: before.number,
      trigger,
      at: new Date().toISOString(),
      durationMs: performance.now() - startedAt,
      changes,
      warnings,
      notApplied,
    };
    catalogListeners.emit(current.assembly.catalog);
    notifyReload(result);
    return result;
  }

  function retire(generation: Generation): void {
    draining.add(generation);
    generation
      .retire()
      .catch((error: unknown) =>
        logger.error(`disposing generation ${generation.number} failed: ${error instanceof Error ? error.message : String(error)}`),
      )
      .finally(() => draining.delete(generation));
  }

  function rejected(trigger: ReloadTrigger, startedAt: number, errors: readonly ReloadProblem[]): ReloadResult {
    return {
      status: 'rejected',
      generation: current.number,
      trigger,
      at: new Date().toISOString(),
      durationMs: performance.now() - startedAt,
      errors,
    };
  }

  if (options.watch ?? true) {
    watch = await watchSources(first.sources, {
      debounceMs: options.debounceMs ?? 150,
      pollIntervalSeconds: current.assembly.config.runtime.config_poll_interval,
      onChange: ({ firstEventAt }) => void reload('watch', firstEventAt),
      onError: (error) => logger.warn(`watching the config and plugin roots: ${error.message}`),
    });
    await watch.ready;
  }
  // From here on children are forked by the spawn helper, a small process of its own: a fork of
  // this host holds its event loop for 5–10 ms, and calls to plugins a reload does not touch would
  // wait for it. Generation 1 was started before the helper was asked for, so starting it is not
  // slowed by the helper's own start.
  const releaseSpawnHelper = acquireSpawnHelper((reason) => {
    logger.warn(reason);
    warningListeners.emit(reason);
  });

  const host: LiveHost = {
    get generation() {
      return current.number;
    },
    get catalog() {
      return current.assembly.catalog;
    },
    get snapshot() {
      return current.assembly.snapshot;
    },
    assembly: undefined as unknown as Assembly,
    invoke,
    addHook(hook) {
      if (addedHooks.has(hook)) return () => undefined;
      const detachers = [current, ...draining].map((generation) => generation.assembly.runtime.addHook(hook));
      addedHooks.set(hook, detachers);
      return () => {
        if (addedHooks.get(hook) !== detachers) return;
        addedHooks.delete(hook);
        for (const detach of detachers) detach();
      };
    },
    reload: (trigger) => reload(trigger ?? 'api'),
    onReload(listener) {
      return reloadListeners.add(listener);
    },
    onCatalogChanged(listener) {
      return catalogListeners.add(listener);
    },
    onWarning(listener) {
      return warningListeners.add(listener);
    },
    status() {
      return {
        generation: current.number,
        since: new Date(current.since).toISOString(),
        ...(lastReload !== undefined ? { lastReload } : {}),
        callsInFlight: current.calls() + [...draining].reduce((sum, generation) => sum + generation.calls(), 0),
        draining: draining.size,
        swapping: barrier.held(),
        waiting: barrier.waiting(),
        watching: watch === undefined ? undefined : sources,
        plugins: current.assembly.snapshot.plugins.map((entry) => pluginStatus(current.assembly, entry.id, entry.state)),
      };
    },
    close() {
      closing ??= (async () => {
        await watch?.close();
        // A reload being built never serves now: stop what it started instead of waiting for it.
        await building?.abandon();
        await running?.catch(() => undefined);
        await queued?.promise.catch(() => undefined);
        await dropping;
        unfollowCatalog();
        await Promise.allSettled([...draining].map((generation) => generation.retire()));
        await current.retire();
        releaseSpawnHelper();
      })();
      return closing;
    },
  };
  (host as { assembly: Assembly }).assembly = liveAssemblyView(host, () => current.assembly);
  return host;
}

function problemsOf(error: unknown): ReloadProblem[] {
  if (error instanceof ConfigError) return error.problems.map((p) => ({ code: p.code, message: p.message }));
  return [
    {
      code: ERROR_CODES.INTERNAL_ERROR,
      message: `building the next generation failed (a bug in Trellis): ${error instanceof Error ? error.message : String(error)}`,
    },
  ];
}

/** The external candidates an assembly admitted and enabled: what it runs, and so may keep (see `RegistryBuildCache`). */
function servingFacts(assembly: Assembly): ExternalCandidateFacts[] {
  const out: ExternalCandidateFacts[] = [];
  for (const d of assembly.registry.trace) if (d.state === 'enabled' && !d.admitted.facts.bundled) out.push(d.admitted.facts);
  return out;
}

/**
 * The manifests that stopped validating between the serving generation and `next`, as errors:
 * those `next` kept with their last valid bytes, and plugins rejected as `MANIFEST_INVALID` that
 * were not, the same way, in `serving` (a new folder saved half-way).
 */
function brokenManifests(serving: PluginRegistrySnapshot, next: Assembly): ReloadProblem[] {
  const out: ReloadProblem[] = [];
  for (const kept of next.registry.keptManifests) {
    // Kept, but not the copy the next generation enables (the same edit disabled it, or a copy in
    // a root that wins serves instead): it stops anyway.
    const serves = next.registry.trace.some(
      (d) => d.state === 'enabled' && !d.admitted.facts.bundled && d.admitted.facts.manifestPath === kept.manifestPath,
    );
    const message = `plugin ${kept.id}: ${kept.message}${serves ? '; it keeps serving with its last valid plugin.toml' : ''}`;
    out.push({ code: ERROR_CODES.MANIFEST_INVALID, message });
  }
  const brokenKey = (entry: PluginRegistrySnapshot['plugins'][number]): string | undefined => {
    const reason = entry.reasons[0];
    return reason?.code === ERROR_CODES.MANIFEST_INVALID ? `${entry.id}\u0000${reason.message}` : undefined;
  };
  const before = new Set(serving.plugins.map(brokenKey).filter((key) => key !== undefined));
  for (const entry of next.snapshot.plugins) {
    const key = brokenKey(entry);
    if (key === undefined || before.has(key)) continue;
    out.push({ code: ERROR_CODES.MANIFEST_INVALID, message: `plugin ${entry.id}: ${entry.reasons[0]?.message ?? 'invalid manifest'}` });
  }
  return out;
}

/**
 * True when two assemblies would serve the same: the same config and snapshot (so the same
 * catalog). The snapshots are compared entry by entry, pausable between (see `Steps`), rather than
 * by `hash`: hashing 1,000 entries at once would hold the event loop for milliseconds.
 */
function* sameServing(a: Assembly, b: Assembly): Steps<boolean> {
  const [x, y] = [a.snapshot, b.snapshot];
  if (x.profile !== y.profile || x.plugins.length !== y.plugins.length) return false;
  if (JSON.stringify(x.warnings) !== JSON.stringify(y.warnings) || !sameConfig(a, b)) return false;
  for (let i = 0; i < x.plugins.length; i += 1) {
    if (i > 0) yield;
    if (entryJson(x.plugins[i]!) !== entryJson(y.plugins[i]!)) return false;
  }
  return true;
}

const sameConfig = (a: Assembly, b: Assembly): boolean => JSON.stringify(a.config) === JSON.stringify(b.config);

function pluginOf(name: string): string {
  const dot = name.indexOf('.');
  return dot === -1 ? name : name.slice(0, dot);
}

function refusedWhileClosing(name: string, generation: number): LiveToolOutcome {
  return {
    ok: false,
    error: { code: ERROR_CODES.ABORTED, message: `the live host is closing; ${name} was not run`, retryable: false },
    generation,
  };
}

function refusedDuringReload(
  name: string,
  pluginId: string,
  timeoutSeconds: number,
  signal: AbortSignal | undefined,
  generation: number,
): LiveToolOutcome {
  if (signal?.aborted === true) {
    return {
      ok: false,
      error: {
        code: ERROR_CODES.ABORTED,
        message: `${name} was aborted while it waited for a reload of plugin ${pluginId}; it was not run`,
        retryable: false,
      },
      generation,
    };
  }
  return {
    ok: false,
    error: {
      code: ERROR_CODES.RELOAD_TIMEOUT,
      message: `${name} waited ${timeoutSeconds} s for the reload of plugin ${pluginId} and was not run; retry it, or raise [runtime] reload_queue_timeout if reloads start slow plugins`,
      retryable: true,
    },
    generation,
  };
}

function pluginStatus(assembly: Assembly, id: string, state: string): LivePluginStatus {
  const lifecycle = state === 'enabled' ? assembly.lifecycle(id) : undefined;
  return {
    id,
    state,
    ...(lifecycle !== undefined ? { lifecycle: lifecycle.state } : {}),
    ...(lifecycle?.lastError !== undefined ? { lastError: lifecycle.lastError } : {}),
  };
}
