import type { ResourceLimits, Worker } from 'node:worker_threads';
import {
  ERROR_CODES,
  silentLogger,
  ToolError,
  type BundledPluginDescriptor,
  type HostServices,
  type Logger,
  type PluginContext,
  type PluginDefinition,
  type ToolContext,
  type ToolDefinition,
  type ToolFailure,
  type ToolProgress,
  type WorkspacePaths,
} from '@trellis/sdk';
import { failureFromThrown } from './outcomeFromThrown.ts';
import type { CanonicalizeContext, ImplementationCall, ImplementationOutcome, LifecycleState, PluginImplementation } from './PluginImplementation.ts';
import { WORKER_SOURCE } from './workerSource.ts';

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
}

/** How long a worker may live after it answered, so its last console output is not lost. */
const WORKER_GRACE_MS = 50;

/** The default limits of a worker-isolated call. */
export const DEFAULT_WORKER_RESOURCE_LIMITS: ResourceLimits = { maxOldGenerationSizeMb: 256, maxYoungGenerationSizeMb: 32, stackSizeMb: 4 };

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyTool = ToolDefinition<any, any, unknown>;

type WorkerReply =
  | { type: 'result'; value: unknown }
  | { type: 'none' }
  | { type: 'thrown'; info: { kind: 'tool'; code: string; message: string; retryable: boolean } | { kind: 'error'; name: string; message: string } | { kind: 'value'; text: string } }
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
  private definition: PluginDefinition | undefined;
  private tools: Map<string, AnyTool> | undefined;
  private failure: string | undefined;
  private readonly workerTools: ReadonlySet<string>;
  private readonly withoutCanonicalize = new Set<string>();
  private readonly workers = new Set<Worker>();
  private readonly logger: Logger;
  private disposed = false;

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
    if (this.workerTools.size < this.options.descriptor.tools.length) await this.load();
  }

  canonicalizes(tool: string): boolean {
    if (this.workerTools.has(tool)) return !this.withoutCanonicalize.has(tool);
    const tools = this.tools;
    if (tools === undefined) return this.failure === undefined; // not loaded yet: ask (and load)
    return typeof tools.get(tool)?.canonicalize === 'function';
  }

  async canonicalize(tool: string, input: unknown, signal: AbortSignal, context?: CanonicalizeContext): Promise<{ input: unknown; summary?: Record<string, unknown> }> {
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
    if (this.failure !== undefined) return Promise.resolve({ ok: false, error: { code: ERROR_CODES.PLUGIN_LOAD_FAILED, message: this.failure, retryable: false } });
    const tool = call.tool;
    const definition = this.tools?.get(tool);
    if (definition === undefined) {
      return Promise.resolve({
        ok: false,
        error: { code: ERROR_CODES.TOOL_NOT_FOUND, message: `plugin ${this.pluginId} declares ${tool} but its code has no such tool; rebuild the plugin`, retryable: false },
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

  private async callInWorker(call: ImplementationCall): Promise<ImplementationOutcome> {
    const reply = await this.runWorker('run', call.tool, call.input, call.signal, call.callId);
    return reply.type === 'result' ? { ok: true, value: reply.value } : { ok: false, error: this.failureOf(reply, call.tool) };
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    this.lifecycle = 'disabled';
    await Promise.allSettled([...this.workers].map((worker) => worker.terminate()));
    this.workers.clear();
    const definition = this.definition;
    if (definition?.dispose !== undefined) {
      try {
        await definition.dispose(this.pluginContext());
      } catch (error) {
        this.logger.warn(`plugin ${this.pluginId} failed to dispose: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }

  private context(source: { readonly signal: AbortSignal; readonly onProgress?: ((update: ToolProgress) => void) | undefined }, callId: string, tool: string): BundledToolContext {
    const o = this.options;
    return new BundledToolContext(source, o.settings, this.logger, o.workspace, o.env, callId, `${this.pluginId}.${tool}`, o.host);
  }

  private pluginContext(): PluginContext {
    const o = this.options;
    return { config: o.settings, logger: this.logger, workspace: o.workspace, env: o.env };
  }

  /** Imports the plugin module and runs `setup`, once; a failure sticks and every later call reports it. */
  private load(): Promise<void> {
    this.loading ??= (async () => {
      this.lifecycle = 'initializing';
      let stage = 'importing its module';
      try {
        const definition = await this.options.descriptor.load();
        if (definition === null || typeof definition !== 'object' || !Array.isArray(definition.tools)) {
          throw new Error('load() did not return a definePlugin(...) value');
        }
        stage = 'running setup';
        if (definition.setup !== undefined) await definition.setup(this.pluginContext());
        this.definition = definition;
        this.tools = new Map(definition.tools.map((tool) => [tool.name, tool as AnyTool]));
        this.lifecycle = this.disposed ? 'disabled' : 'active';
      } catch (error) {
        this.failure = `plugin ${this.pluginId} failed while ${stage}: ${error instanceof Error ? error.message : String(error)}; fix the plugin, then restart the host`;
        this.lifecycle = 'error';
        this.logger.error(this.failure);
      }
    })();
    return this.loading;
  }

  private async runWorker(mode: 'canonicalize' | 'run', tool: string, input: unknown, signal: AbortSignal, callId: string): Promise<WorkerReply> {
    const moduleUrl = this.options.descriptor.moduleUrl;
    if (moduleUrl === undefined) {
      return Promise.resolve({
        type: 'load-failed',
        message: `plugin ${this.pluginId} marks ${tool} isolation = "worker" but its descriptor has no moduleUrl for the worker to import`,
      });
    }
    if (signal.aborted) return Promise.resolve({ type: 'aborted', message: 'aborted before the worker started' });
    // Loaded here, not at import: most hosts never isolate a tool in a worker.
    const { Worker: WorkerThread } = await import('node:worker_threads');
    if (signal.aborted) return { type: 'aborted', message: 'aborted before the worker started' };
    const o = this.options;
    const limits = o.workerResourceLimits ?? DEFAULT_WORKER_RESOURCE_LIMITS;
    let worker: Worker;
    try {
      worker = new WorkerThread(WORKER_SOURCE, {
        eval: true,
        workerData: { mode, moduleUrl, tool, name: `${this.pluginId}.${tool}`, input, settings: o.settings, workspace: o.workspace, env: o.env, callId },
        resourceLimits: limits,
        // A plugin's console output must not mix with the host's own stdout (e.g. `--json`): it goes to the debug log.
        stdout: true,
        stderr: true,
      });
      const name = `${this.pluginId}.${tool}`;
      worker.stdout.setEncoding('utf8').on('data', (text: string) => this.logger.debug(`${name} (worker stdout): ${text.trimEnd()}`));
      worker.stderr.setEncoding('utf8').on('data', (text: string) => this.logger.debug(`${name} (worker stderr): ${text.trimEnd()}`));
    } catch (error) {
      return Promise.resolve({ type: 'crashed', message: `the worker could not start: ${error instanceof Error ? error.message : String(error)}` });
    }
    this.workers.add(worker);
    this.lifecycle = this.lifecycle === 'unloaded' ? 'active' : this.lifecycle;
    return new Promise<WorkerReply>((resolve) => {
      let settled = false;
      worker.once('exit', () => this.workers.delete(worker));
      const finish = (reply: WorkerReply, terminateNow: boolean): void => {
        if (settled) return;
        settled = true;
        signal.removeEventListener('abort', onAbort);
        resolve(reply);
        // After an answer, a short grace lets the worker's last console output arrive before the
        // thread (and anything the plugin left running in it) is terminated.
        if (terminateNow) void worker.terminate();
        else setTimeout(() => void worker.terminate(), WORKER_GRACE_MS).unref();
      };
      const onAbort = (): void => finish({ type: 'aborted', message: 'the call was aborted; the worker was terminated' }, true);
      signal.addEventListener('abort', onAbort, { once: true });
      worker.on('message', (message: WorkerReply | { type: 'log'; level: keyof Logger; message: string; fields?: Record<string, unknown> }) => {
        if (message.type === 'log') {
          const level = ['debug', 'info', 'warn', 'error'].includes(message.level) ? message.level : 'info';
          this.logger[level](message.message, message.fields);
          return;
        }
        finish(message, false);
      });
      worker.on('error', (error: Error & { code?: string }) => {
        const message =
          error.code === 'ERR_WORKER_OUT_OF_MEMORY'
            ? `the worker ran out of memory (limit ${limits.maxOldGenerationSizeMb ?? '?'} MB old generation)`
            : `the worker failed: ${error.message}`;
        finish({ type: 'crashed', message }, true);
      });
      worker.on('exit', (code) => finish({ type: 'crashed', message: `the worker exited with code ${code} before answering` }, true));
    });
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
        return { code: ERROR_CODES.OUTPUT_NOT_SERIALIZABLE, message: `${name} returned a result that cannot be serialized: ${reply.message} (a bug in the tool)`, retryable: false };
      case 'load-failed':
        return { code: ERROR_CODES.PLUGIN_LOAD_FAILED, message: `plugin ${this.pluginId} failed to load in a worker: ${reply.message}`, retryable: false };
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
 * contract says `isolation = "worker"` run in a fresh worker thread per call, which imports
 * `descriptor.moduleUrl` itself, runs under `resourceLimits`, and is terminated when the call's
 * signal aborts (deadline or caller), so even `while (true) {}` cannot hang the host.
 */
export function createBundledImplementation(options: CreateBundledImplementationOptions): PluginImplementation {
  return new BundledImplementation(options);
}
