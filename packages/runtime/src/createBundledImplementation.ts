import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { ResourceLimits } from 'node:worker_threads';
import {
  ERROR_CODES,
  silentLogger,
  ToolError,
  type HostServices,
  type KeepAliveStore,
  type Logger,
  type PluginContext,
  type PluginCode,
  type ToolContext,
  type ToolImplementation,
  type ToolFailure,
  type ToolSource,
  type ToolSourceReason,
  type ToolSpec,
  type LifecycleTransition,
  type PartLifecycleReport,
  type ToolProgress,
  type WorkspacePaths,
} from '@trellis/sdk';
import { Listeners, type BundledPluginDescriptor } from '@trellis/sdk/internal';
import { failureFromThrown } from './outcomeFromThrown.ts';
import type {
  ImplementationHealth,
  CanonicalizeContext,
  ImplementationCall,
  ImplementationOutcome,
  LifecycleState,
  PluginImplementation,
} from './PluginImplementation.ts';
import { acquireWorkerPool, isPoolAbort, type WorkerPoolLease } from './workerPool.ts';

/** Options of `createBundledImplementation`. */
export interface CreateBundledImplementationOptions {
  readonly descriptor: BundledPluginDescriptor;
  /** The plugin's resolved settings (defaults with `[runtime.tools.<key>]` merged over them). */
  readonly settings: unknown;
  readonly workspace: WorkspacePaths;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly logger?: Logger;
  readonly host: HostServices;
  /** Limits for worker-isolated calls. Default: 256 MB old generation, 32 MB young, 4 MB stack. */
  readonly workerResourceLimits?: ResourceLimits;
  /** Most worker threads of the tool pool. Default: twice the machine's parallelism, at least 4. */
  readonly maxWorkerThreads?: number;
  /** How much a plugin's `toolSource` learns on `start` (see `ToolSourceStartOptions.mode`). Default `cached`. */
  readonly toolSourceMode?: 'cached' | 'refresh';
  /** Values the plugin keeps alive across a live host's generations (`PluginContext.keepAlive`). */
  readonly keepAlive?: KeepAliveStore;
  /** `[plugins.entries.<id>] max_restarts`, when set (`PluginContext.maxRestarts`). */
  readonly maxRestarts?: number;
}

/** The default limits of a worker-isolated call. */
export const DEFAULT_WORKER_RESOURCE_LIMITS: ResourceLimits = { maxOldGenerationSizeMb: 256, maxYoungGenerationSizeMb: 32, stackSizeMb: 4 };

interface WorkerLog {
  readonly level: string;
  readonly message: string;
  readonly fields?: Record<string, unknown>;
}

/** tsx's ESM registration, found from the plugin's own folder, for workers that import TypeScript sources. */
function tsxLoaderUrl(moduleUrl: string): string | null {
  try {
    const pkg = createRequire(fileURLToPath(moduleUrl)).resolve('tsx/package.json');
    return pathToFileURL(join(dirname(pkg), 'dist', 'esm', 'api', 'index.mjs')).href;
  } catch {
    return null;
  }
}

type WorkerReply =
  | { type: 'result'; value: unknown }
  | { type: 'none' }
  | {
      type: 'thrown';
      info:
        | { kind: 'tool'; code: string; message: string; retryable: boolean }
        | { kind: 'error'; name: string; message: string }
        | { kind: 'value'; text: string };
    }
  | { type: 'unserializable'; message: string }
  | { type: 'load-failed'; message: string }
  | { type: 'crashed'; message: string }
  | { type: 'aborted'; message: string };

/** A tool's context, built per call; the signal is read through, so it is created only if the tool looks. */
class BundledToolContext implements ToolContext {
  constructor(
    private readonly source: { readonly signal: AbortSignal; readonly onProgress?: ((update: ToolProgress) => void) | undefined },
    readonly config: unknown,
    readonly logger: Logger,
    readonly workspace: WorkspacePaths,
    readonly env: Readonly<Record<string, string | undefined>>,
    readonly callId: string,
    readonly tool: string,
    readonly host: HostServices,
  ) {}

  get signal(): AbortSignal {
    return this.source.signal;
  }

  progress(update: ToolProgress): void {
    const listener = this.source.onProgress;
    if (listener === undefined) return;
    // A listener's failure must not fail the tool that reported progress.
    try {
      listener(update);
    } catch {
      // ignored
    }
  }
}

class BundledImplementation implements PluginImplementation {
  readonly pluginId: string;
  private lifecycle: LifecycleState = 'unloaded';
  private loading: Promise<void> | undefined;
  private definition: PluginCode | undefined;
  private tools: Map<string, ToolImplementation> | undefined;
  private failure: string | undefined;
  private readonly workerTools: ReadonlySet<string>;
  private readonly withoutCanonicalize = new Set<string>();
  /** Calls running in the pool, aborted (their workers terminated) on dispose. */
  private readonly running = new Set<AbortController>();
  private poolLease: WorkerPoolLease | undefined;
  private loaderUrl: string | null | undefined;
  /** Names this implementation's plugin state (module, setup) inside a pool worker. */
  private readonly setupKey = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
  private readonly logger: Logger;
  private disposed = false;
  private source: ToolSource | undefined;
  private readonly sourceListeners = new Listeners<void>((error) =>
    this.logger.error(`plugin ${this.pluginId}: a tools-changed listener threw: ${error instanceof Error ? error.message : String(error)}`),
  );
  private readonly lifecycleListeners = new Listeners<LifecycleTransition>((error) =>
    this.logger.error(`plugin ${this.pluginId}: a lifecycle listener threw: ${error instanceof Error ? error.message : String(error)}`),
  );

  constructor(private readonly options: CreateBundledImplementationOptions) {
    this.pluginId = options.descriptor.manifest.id;
    this.logger = options.logger ?? silentLogger;
    this.workerTools = new Set(options.descriptor.tools.filter((tool) => tool.contract.isolation === 'worker').map((tool) => tool.name));
  }

  state(): LifecycleState {
    return this.lifecycle;
  }

  lastError(): string | undefined {
    return this.failure;
  }

  async start(): Promise<void> {
    // A plugin whose every tool runs in a worker never loads in the host's thread.
    if (this.workerTools.size < this.options.descriptor.tools.length || this.options.descriptor.dynamicTools === true) await this.load();
    if (this.source !== undefined && !this.disposed) {
      try {
        await this.source.start({ mode: this.options.toolSourceMode ?? 'cached' });
      } catch (error) {
        this.logger.error(
          `plugin ${this.pluginId}: its tool source failed to start: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
    }
  }

  /** The tools the plugin's `toolSource` knows now (offered or withheld); undefined without one. */
  discoveredTools(): readonly ToolSpec[] | undefined {
    if (this.source === undefined) return undefined;
    try {
      // The catalog reads a source's specs like a get_tools reply: missing fields get defaults.
      return this.source.list() as unknown as readonly ToolSpec[];
    } catch (error) {
      this.logger.error(
        `plugin ${this.pluginId}: its tool source failed to list tools: ${error instanceof Error ? error.message : String(error)}`,
      );
      return [];
    }
  }

  /** Calls `listener` whenever the tool source's list changes; returns the unsubscribe function. */
  onToolsChanged(listener: () => void): () => void {
    return this.sourceListeners.add(listener);
  }

  /** The plugin's lifecycle with its tool source's parts (each bridged server), for `trellis status`. */
  health(): ImplementationHealth {
    let parts: readonly PartLifecycleReport[] = [];
    try {
      parts = this.source?.health?.() ?? [];
    } catch (error) {
      this.logger.error(
        `plugin ${this.pluginId}: its tool source failed to report health: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    return {
      state: this.lifecycle,
      ...(this.failure !== undefined ? { lastError: this.failure } : {}),
      restarts: 0,
      ...(parts.length > 0 ? { parts } : {}),
    };
  }

  /** Lifecycle transitions of the tool source's parts (a bridged server going down and back). */
  onLifecycleChange(listener: (transition: LifecycleTransition) => void): () => void {
    return this.lifecycleListeners.add(listener);
  }

  /** The tool source's problems (a server down), for `plugins explain` and `doctor`. */
  problems(): readonly ToolSourceReason[] {
    try {
      return this.source?.problems?.() ?? [];
    } catch {
      return [];
    }
  }

  canonicalizes(tool: string): boolean {
    if (this.workerTools.has(tool)) return !this.withoutCanonicalize.has(tool);
    const tools = this.tools;
    if (tools !== undefined) return typeof tools.get(tool)?.canonicalize === 'function';
    // Not loaded yet: the build's list answers (a burst of first calls need not wait for the
    // plugin to load only to learn that the tool has no hook); without one, ask (and load).
    const known = this.options.descriptor.canonicalizing;
    if (known !== undefined && this.options.descriptor.dynamicTools !== true) return known.includes(tool);
    return this.failure === undefined;
  }

  async canonicalize(
    tool: string,
    input: unknown,
    signal: AbortSignal,
    context?: CanonicalizeContext,
  ): Promise<{ input: unknown; summary?: Record<string, unknown> }> {
    const callId = context?.callId ?? '';
    if (this.workerTools.has(tool)) {
      const reply = await this.runWorker('canonicalize', tool, input, signal, callId);
      if (reply.type === 'none') {
        this.withoutCanonicalize.add(tool);
        return { input };
      }
      if (reply.type === 'result') return reply.value as { input: unknown; summary?: Record<string, unknown> };
      const failure = this.failureOf(reply, tool);
      throw new ToolError(failure.code, failure.message, { retryable: failure.retryable });
    }
    await this.load();
    if (this.failure !== undefined) throw new ToolError(ERROR_CODES.PLUGIN_LOAD_FAILED, this.failure);
    const definition = this.tools?.get(tool);
    if (definition?.canonicalize === undefined) return { input };
    const result = await definition.canonicalize(input, this.context({ signal }, callId, tool));
    return { input: result.input, summary: result.summary as Record<string, unknown> | undefined };
  }

  call(call: ImplementationCall): Promise<ImplementationOutcome> {
    const tool = call.tool;
    if (this.workerTools.has(tool)) return this.callInWorker(call);
    const tools = this.tools;
    if (tools === undefined) return this.load().then(() => this.callLoaded(call));
    return this.callLoaded(call);
  }

  // The hot path: no async frame, and a synchronous tool result costs one resolved promise.
  private callLoaded(call: ImplementationCall): Promise<ImplementationOutcome> {
    if (this.failure !== undefined)
      return Promise.resolve({ ok: false, error: { code: ERROR_CODES.PLUGIN_LOAD_FAILED, message: this.failure, retryable: false } });
    const tool = call.tool;
    const definition = this.tools?.get(tool);
    if (definition === undefined && this.source !== undefined) return this.callSource(this.source, call);
    if (definition === undefined) {
      return Promise.resolve({
        ok: false,
        error: {
          code: ERROR_CODES.TOOL_NOT_FOUND,
          message: `plugin ${this.pluginId} declares ${tool} but its code has no such tool; rebuild the plugin`,
          retryable: false,
        },
      });
    }
    let result: unknown;
    try {
      result = definition.run(call.input, this.context(call, call.callId, tool));
    } catch (thrown) {
      return Promise.resolve({ ok: false, error: failureFromThrown(thrown, `${this.pluginId}.${tool}`) });
    }
    if (result !== null && typeof result === 'object' && typeof (result as PromiseLike<unknown>).then === 'function') {
      return Promise.resolve(result as PromiseLike<unknown>).then(
        (value): ImplementationOutcome => ({ ok: true, value }),
        (thrown: unknown): ImplementationOutcome => ({ ok: false, error: failureFromThrown(thrown, `${this.pluginId}.${tool}`) }),
      );
    }
    return Promise.resolve({ ok: true, value: result });
  }

  private async callSource(source: ToolSource, call: ImplementationCall): Promise<ImplementationOutcome> {
    const name = `${this.pluginId}.${call.tool}`;
    try {
      const value = await source.call(call.tool, call.input, this.context(call, call.callId, call.tool));
      return { ok: true, value };
    } catch (thrown) {
      return { ok: false, error: failureFromThrown(thrown, name) };
    }
  }

  private async callInWorker(call: ImplementationCall): Promise<ImplementationOutcome> {
    const reply = await this.runWorker('run', call.tool, call.input, call.signal, call.callId);
    return reply.type === 'result' ? { ok: true, value: reply.value } : { ok: false, error: this.failureOf(reply, call.tool) };
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    this.lifecycle = 'disabled';
    for (const controller of this.running) controller.abort(new Error('the plugin was shut down'));
    this.running.clear();
    await this.poolLease?.release();
    this.poolLease = undefined;
    this.sourceListeners.clear();
    if (this.source !== undefined) {
      try {
        await this.source.close();
      } catch (error) {
        this.logger.warn(
          `plugin ${this.pluginId}: its tool source failed to close: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
    }
    const definition = this.definition;
    if (definition?.dispose !== undefined) {
      try {
        await definition.dispose(this.pluginContext());
      } catch (error) {
        this.logger.warn(`plugin ${this.pluginId} failed to dispose: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }

  private context(
    source: { readonly signal: AbortSignal; readonly onProgress?: ((update: ToolProgress) => void) | undefined },
    callId: string,
    tool: string,
  ): BundledToolContext {
    const o = this.options;
    return new BundledToolContext(source, o.settings, this.logger, o.workspace, o.env, callId, `${this.pluginId}.${tool}`, o.host);
  }

  private pluginContext(): PluginContext {
    const o = this.options;
    return {
      config: o.settings,
      logger: this.logger,
      workspace: o.workspace,
      env: o.env,
      ...(o.keepAlive !== undefined ? { keepAlive: o.keepAlive } : {}),
      ...(o.maxRestarts !== undefined ? { maxRestarts: o.maxRestarts } : {}),
    };
  }

  /** Imports the plugin module and runs `setup`, once; a failure sticks and every later call reports it. */
  private load(): Promise<void> {
    this.loading ??= (async () => {
      this.lifecycle = 'initializing';
      let stage = 'importing its module';
      try {
        const definition = await this.options.descriptor.load();
        if (definition === null || typeof definition !== 'object' || !Array.isArray(definition.tools)) {
          throw new Error('load() did not return a definePlugin(...) or definePluginCode(...) value');
        }
        stage = 'running setup';
        if (definition.setup !== undefined) await definition.setup(this.pluginContext());
        this.definition = definition;
        this.tools = new Map(definition.tools.map((tool) => [tool.name, tool]));
        if (typeof definition.toolSource === 'function' && !this.disposed) {
          stage = 'creating its tool source';
          const source = definition.toolSource(this.pluginContext());
          source.onChanged(() => this.sourceListeners.emit());
          source.onLifecycleChange?.((transition) => this.lifecycleListeners.emit(transition));
          this.source = source;
        }
        this.lifecycle = this.disposed ? 'disabled' : 'active';
      } catch (error) {
        this.failure = `plugin ${this.pluginId} failed while ${stage}: ${error instanceof Error ? error.message : String(error)}; fix the plugin, then restart the host`;
        this.lifecycle = 'error';
        this.logger.error(this.failure);
      }
    })();
    return this.loading;
  }

  /** The lease on the shared worker pool, taken on the first worker call. */
  private lease(moduleUrl: string): WorkerPoolLease {
    if (this.poolLease === undefined) {
      const o = this.options;
      // From source (tests, benches) the plugin module is TypeScript: workers resolve workspace
      // packages to their sources and register tsx before importing it. A build never gets here.
      const source = moduleUrl.endsWith('.ts');
      this.poolLease = acquireWorkerPool({
        resourceLimits: o.workerResourceLimits ?? DEFAULT_WORKER_RESOURCE_LIMITS,
        ...(source ? { execArgv: ['--conditions=@trellis/source'] } : {}),
        ...(o.maxWorkerThreads === undefined ? {} : { maxThreads: o.maxWorkerThreads }),
        onIdleError: (error) => this.logger.warn(`a worker thread of the tool pool failed while idle and was replaced: ${error.message}`),
      });
    }
    return this.poolLease;
  }

  private async runWorker(
    mode: 'canonicalize' | 'run',
    tool: string,
    input: unknown,
    signal: AbortSignal,
    callId: string,
  ): Promise<WorkerReply> {
    const moduleUrl = this.options.descriptor.moduleUrl;
    if (moduleUrl === undefined) {
      return {
        type: 'load-failed',
        message: `plugin ${this.pluginId} marks ${tool} isolation = "worker" but its descriptor has no moduleUrl for the worker to import`,
      };
    }
    if (this.disposed) return { type: 'aborted', message: 'the plugin was shut down' };
    if (signal.aborted) return { type: 'aborted', message: 'aborted before the worker started' };
    const o = this.options;
    const limits = o.workerResourceLimits ?? DEFAULT_WORKER_RESOURCE_LIMITS;
    this.loaderUrl ??= moduleUrl.endsWith('.ts') ? tsxLoaderUrl(moduleUrl) : null;
    const task = {
      mode,
      moduleUrl,
      loaderUrl: this.loaderUrl,
      setupKey: this.setupKey,
      tool,
      name: `${this.pluginId}.${tool}`,
      input,
      settings: o.settings,
      workspace: o.workspace,
      env: o.env,
      callId,
    };
    this.lifecycle = this.lifecycle === 'unloaded' ? 'active' : this.lifecycle;
    const controller = new AbortController();
    const onAbort = (): void => controller.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    this.running.add(controller);
    try {
      const reply = (await this.lease(moduleUrl).run(task, controller.signal)) as WorkerReply & { logs?: WorkerLog[] };
      for (const line of reply.logs ?? []) {
        const level = (['debug', 'info', 'warn', 'error'] as const).find((known) => known === line.level) ?? 'info';
        this.logger[level](
          line.level === 'debug' && line.message.startsWith('(worker ') ? `${this.pluginId}.${tool} ${line.message}` : line.message,
          line.fields,
        );
      }
      return reply;
    } catch (error) {
      if (controller.signal.aborted || isPoolAbort(error))
        return { type: 'aborted', message: 'the call was aborted; its worker was terminated and replaced' };
      const code = (error as { code?: unknown } | null)?.code;
      if (code === 'ERR_WORKER_OUT_OF_MEMORY')
        return {
          type: 'crashed',
          message: `the worker ran out of memory (limit ${limits.maxOldGenerationSizeMb ?? '?'} MB old generation)`,
        };
      return { type: 'crashed', message: `the worker failed: ${error instanceof Error ? error.message : String(error)}` };
    } finally {
      signal.removeEventListener('abort', onAbort);
      this.running.delete(controller);
    }
  }

  private failureOf(reply: WorkerReply, tool: string): ToolFailure {
    const name = `${this.pluginId}.${tool}`;
    switch (reply.type) {
      case 'thrown': {
        const info = reply.info;
        if (info.kind === 'tool') return failureFromThrown(new ToolError(info.code, info.message, { retryable: info.retryable }), name);
        if (info.kind === 'error') return failureFromThrown(Object.assign(new Error(info.message), { name: info.name }), name);
        return {
          code: ERROR_CODES.TOOL_THREW,
          message: `${name} threw a non-Error value: ${info.text} (a bug in the tool; a tool reports failures with ToolError)`,
          retryable: false,
        };
      }
      case 'unserializable':
        return {
          code: ERROR_CODES.OUTPUT_NOT_SERIALIZABLE,
          message: `${name} returned a result that cannot be serialized: ${reply.message} (a bug in the tool)`,
          retryable: false,
        };
      case 'load-failed':
        return {
          code: ERROR_CODES.PLUGIN_LOAD_FAILED,
          message: `plugin ${this.pluginId} failed to load in a worker: ${reply.message}`,
          retryable: false,
        };
      case 'crashed':
        return { code: ERROR_CODES.PLUGIN_CRASHED, message: `${name}: ${reply.message}`, retryable: false };
      case 'aborted':
        return { code: ERROR_CODES.ABORTED, message: `${name}: ${reply.message}`, retryable: false };
      default:
        return { code: ERROR_CODES.INTERNAL_ERROR, message: `${name}: the worker answered ${reply.type} unexpectedly`, retryable: false };
    }
  }
}

/**
 * The in-process implementation of a bundled plugin. Lazy: nothing is imported until the first
 * call (or `start`). The module is loaded with `descriptor.load()` and `setup` runs once; a
 * failure of either is kept and reported by every call as `PLUGIN_LOAD_FAILED`. Tools whose
 * contract says `isolation = "worker"` run on the shared worker pool (tinypool, see workerPool.ts):
 * a pool worker imports `descriptor.moduleUrl` itself, runs under `resourceLimits`, and is
 * terminated and replaced when the call's signal aborts (deadline or caller), so even
 * `while (true) {}` cannot hold the host past its deadline.
 */
export function createBundledImplementation(options: CreateBundledImplementationOptions): PluginImplementation {
  return new BundledImplementation(options);
}
