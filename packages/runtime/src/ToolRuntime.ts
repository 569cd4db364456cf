import type { RuntimeConfig } from '@trellis/config';
import {
  CAPABILITIES,
  ERROR_CODES,
  isToolError,
  silentLogger,
  type Logger,
  type ToolContract,
  type ToolFailure,
  type ToolOutcome,
  type ToolProgress,
} from '@trellis/sdk';
import { compileToolGlob, lazyCrypto } from '@trellis/sdk/internal';
import type { AuditRecord, AuditSink } from './AuditLog.ts';
import { createFileAuditLog } from './AuditLog.ts';
import { checkOutput } from './checkOutput.ts';
import { firstMatchingGlob } from './compileToolGlob.ts';
import { DeadlineScheduler, type Expirable } from './DeadlineScheduler.ts';
import type { ExecutionEvent, ExecutionHook } from './ExecutionEvent.ts';
import { findTooDeep } from './findTooDeep.ts';
import { failureFromThrown } from './outcomeFromThrown.ts';
import type { ImplementationCall, ImplementationOutcome, PluginImplementation } from './PluginImplementation.ts';
import type { RuntimeCatalog, RuntimeToolDescriptor } from './RuntimeCatalog.ts';
import type { CompiledSchema, SchemaValidatorCache, UnsafeSchema } from './SchemaValidatorCache.ts';

/** One tool call as a caller asks for it. */
export interface ToolRequest {
  /** Fully qualified tool name, `<plugin-id>.<tool>`. */
  readonly name: string;
  /** The arguments; `undefined` means `{}`. */
  readonly input?: unknown;
  /** An id for logs, hooks and the audit log; generated when absent. */
  readonly callId?: string;
}

/** Per-call options. */
export interface InvokeOptions {
  /** Aborting it ends the call with `ABORTED`. */
  readonly signal?: AbortSignal;
  /** The caller's own deadline for this call, in milliseconds from now (capped by the tool's). */
  readonly deadlineMs?: number;
  /** Receives the tool's progress reports while the call runs (`ctx.progress`, a process plugin's `progress` messages). */
  readonly onProgress?: (update: ToolProgress) => void;
}

/** What the approval hook is asked: the call as it will really run. */
export interface ApprovalRequest {
  readonly callId: string;
  /** Fully qualified tool name. */
  readonly tool: string;
  readonly plugin: string;
  /** The canonical input (after the tool's canonicalize hook). */
  readonly input: unknown;
  /** The canonicalize hook's secret-free summary of what will run, when it gave one. */
  readonly summary?: Readonly<Record<string, unknown>>;
  /** `policy`: a `[runtime.policy] ask` glob matched (`rule`); `contract`: the tool's contract says `approval = 'ask'`. */
  readonly reason: 'policy' | 'contract';
  readonly rule?: string;
  readonly contract: ToolContract;
  /** Aborted when the call's deadline passes or the caller gives up; a prompt should close then. */
  readonly signal: AbortSignal;
}

/**
 * Says yes (true) or no (false) to one call, or `{ refused }` with why no one said yes (e.g. no
 * terminal to ask on), which the outcome's message carries. A throw or rejection counts as no.
 */
export type ApprovalHook = (request: ApprovalRequest) => boolean | ApprovalRefusal | Promise<boolean | ApprovalRefusal>;

/** A refusal with its reason in words, e.g. "nobody could be asked: …". */
export interface ApprovalRefusal {
  readonly refused: string;
}

/** Finds a plugin's implementation by plugin id; asked once per plugin, on its first call. */
export type ImplementationResolver = ((pluginId: string) => PluginImplementation | undefined) | ReadonlyMap<string, PluginImplementation>;

/** Options of `createToolRuntime`. */
export interface CreateToolRuntimeOptions {
  /** Where tools are looked up; a `ResourceCatalog` fits. */
  readonly catalog: RuntimeCatalog;
  readonly implementations: ImplementationResolver;
  /** The loaded runtime.toml; only `[runtime]` is read. */
  readonly config: Pick<RuntimeConfig, 'runtime'>;
  /** Execution hooks attached from the start (more with `addHook`). */
  readonly hooks?: readonly ExecutionHook[];
  /** Asked before every call that needs approval. Without it such calls end with `APPROVAL_DENIED`. */
  readonly approve?: ApprovalHook;
  readonly logger?: Logger;
  /** Where audit records go. Default: a JSON-lines file at `[runtime] audit_log` when set, else none. */
  readonly auditLog?: AuditSink;
}

/** Runs tool calls: lookup → validate → capability → canonicalize → policy → attempts → outcome. */
export interface ToolRuntime {
  /** Runs one call. Never throws, never rejects, and resolves by the call's deadline. */
  invoke(request: ToolRequest, options?: InvokeOptions): Promise<ToolOutcome>;
  /** Attaches an execution hook; returns a function that detaches it. */
  addHook(hook: ExecutionHook): () => void;
  /** Ends calls in flight with `ABORTED`, disposes every implementation that was resolved, closes the audit log. */
  dispose(): Promise<void>;
}

const INTERRUPTED: unique symbol = Symbol('interrupted');
type Interrupted = typeof INTERRUPTED;
const NO_STRINGS: readonly string[] = Object.freeze([]);
const noop = (): void => {};

// Codes a catalog may give for a tool it does not offer, which the runtime's own stages decide
// (and report) themselves.
const RUNTIME_STAGE_CODES = new Set<string>([ERROR_CODES.CAPABILITY_DENIED, ERROR_CODES.POLICY_DENIED]);
// Failures of canonicalize that are not the tool refusing its arguments.
const PASS_THROUGH_CODES = new Set<string>([
  ERROR_CODES.PLUGIN_LOAD_FAILED,
  ERROR_CODES.PLUGIN_CRASHED,
  ERROR_CODES.PLUGIN_UNAVAILABLE,
  ERROR_CODES.PROTOCOL_ERROR,
  ERROR_CODES.HTTP_ERROR,
  ERROR_CODES.TIMEOUT,
  ERROR_CODES.ABORTED,
]);

/** A plugin's implementation and its concurrency gate. */
class PluginGate {
  impl: PluginImplementation | undefined;
  resolved = false;
  /** The one start shared by every call that arrives before the implementation is loaded. */
  starting: Promise<void> | undefined;
  active = 0;
  private readonly queue: Invocation[] = [];
  private queueStart = 0;

  constructor(
    readonly id: string,
    readonly limit: number,
  ) {}

  tryAcquire(): boolean {
    if (this.active < this.limit) {
      this.active += 1;
      return true;
    }
    return false;
  }

  enqueue(call: Invocation): void {
    call.queued = true;
    this.queue.push(call);
  }

  dequeue(call: Invocation): void {
    const index = this.queue.indexOf(call, this.queueStart);
    if (index >= 0) this.queue.splice(index, 1);
    call.queued = false;
  }

  release(): void {
    while (this.queueStart < this.queue.length) {
      const next = this.queue[this.queueStart] as Invocation;
      this.queueStart += 1;
      if (this.queueStart > 64 && this.queueStart * 2 > this.queue.length) {
        this.queue.splice(0, this.queueStart);
        this.queueStart = 0;
      }
      if (!next.queued) continue;
      next.queued = false;
      next.grant(); // the slot passes to the next call in line
      return;
    }
    this.active -= 1;
  }
}

/** Everything about a tool that does not change between calls, computed once. */
class ToolEntry {
  schema: CompiledSchema | UnsafeSchema | undefined;
  readonly required: readonly string[];
  readonly missing: readonly string[];
  readonly denied: string | undefined;
  readonly deniedRule: string | undefined;
  readonly ask: 'none' | 'policy' | 'contract';
  readonly askRule: string | undefined;
  readonly maxAttempts: number;
  readonly deadlineMs: number;

  constructor(
    readonly descriptor: RuntimeToolDescriptor,
    readonly gate: PluginGate,
    settings: RuntimeSettings,
  ) {
    const contract = descriptor.contract;
    const name = descriptor.name;
    this.required = contract.capabilities.length === 0 ? NO_STRINGS : [...contract.capabilities];
    const missing = this.required.filter((capability) => !settings.granted.has(capability));
    this.missing = missing.length === 0 ? NO_STRINGS : missing;
    const deny = firstMatchingGlob(settings.policy.deny, name);
    if (deny !== undefined) {
      this.denied = `${name} is denied by [runtime.policy] deny = "${deny}" in runtime.toml; remove that pattern to allow it`;
      this.deniedRule = deny;
    } else if (!settings.allow.some((matches) => matches(name))) {
      this.denied = `${name} is not in [runtime.policy] allow (${settings.policy.allow.map((p) => `"${p}"`).join(', ') || 'empty'}); add a pattern that matches it to allow it`;
    }
    const askRule = firstMatchingGlob(settings.policy.ask, name);
    this.askRule = askRule;
    this.ask = askRule !== undefined ? 'policy' : contract.approval === 'ask' ? 'contract' : 'none';
    const retries = typeof contract.maxRetries === 'number' ? contract.maxRetries : settings.maxRetries;
    this.maxAttempts = Math.max(0, Math.floor(retries)) + 1;
    const contractMs = typeof contract.deadlineMs === 'number' && contract.deadlineMs > 0 ? contract.deadlineMs : Number.POSITIVE_INFINITY;
    this.deadlineMs = Math.min(contractMs, settings.capMs);
  }
}

interface RuntimeSettings {
  readonly granted: ReadonlySet<string>;
  readonly policy: { readonly allow: readonly string[]; readonly deny: readonly string[]; readonly ask: readonly string[] };
  readonly allow: ReadonlyArray<(name: string) => boolean>;
  readonly maxRetries: number;
  readonly capMs: number;
  readonly maxOutputBytes: number;
  readonly maxConcurrency: number;
  readonly backoffMs: number;
}

/** One call in flight. It is the `ImplementationCall` handed to the implementation. */
class Invocation implements ImplementationCall, Expirable {
  tool = '';
  input: unknown = undefined;
  deadlineAt = 0;
  heapIndex = -1;
  queued = false;
  awaitingApproval = false;
  timeoutMs = 0;
  attempts = 0;
  gate: PluginGate | undefined;
  interrupted: ToolFailure | undefined;
  onProgress: ((update: ToolProgress) => void) | undefined = undefined;
  private controller: AbortController | undefined;
  private wake: ((value: Interrupted | undefined) => void) | undefined;
  /** `onInterrupt` listeners: usually none, or one (the process adapter's request). */
  private listeners: Array<() => void> | undefined;

  constructor(
    readonly callId: string,
    readonly name: string,
  ) {}

  /** Created on first use: most in-process tools never look at it, and an AbortController costs microseconds. */
  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.interrupted !== undefined) this.controller.abort(new Error(this.interrupted.message));
    }
    return this.controller.signal;
  }

  onInterrupt(listener: () => void): () => void {
    if (this.interrupted !== undefined) {
      listener();
      return noop;
    }
    (this.listeners ??= []).push(listener);
    return () => {
      const at = this.listeners?.indexOf(listener) ?? -1;
      if (at !== -1) this.listeners!.splice(at, 1);
    };
  }

  expire(): void {
    let message: string;
    if (this.queued) {
      message = `${this.name} did not start within its ${this.timeoutMs} ms deadline: plugin ${this.gate?.id ?? '?'} was already running ${this.gate?.limit ?? '?'} calls ([runtime] max_concurrency) and this one waited in the queue`;
    } else if (this.awaitingApproval) {
      message = `${this.name} was not approved within its ${this.timeoutMs} ms deadline; nothing was run`;
    } else {
      message = `${this.name} did not finish within its ${this.timeoutMs} ms deadline and was abandoned`;
    }
    this.interrupt({ code: ERROR_CODES.TIMEOUT, message, retryable: false });
  }

  interrupt(failure: ToolFailure): void {
    if (this.interrupted !== undefined) return;
    this.interrupted = failure;
    if (this.queued) this.gate?.dequeue(this);
    this.controller?.abort(new Error(failure.message));
    const listeners = this.listeners;
    this.listeners = undefined;
    if (listeners !== undefined) {
      for (const listener of listeners) {
        try {
          listener();
        } catch {
          // An implementation's listener must not keep the call from ending.
        }
      }
    }
    const wake = this.wake;
    this.wake = undefined;
    wake?.(INTERRUPTED);
  }

  /** The outcome of an interrupted call (deadline passed, caller aborted, runtime shut down). */
  interruption(): { readonly ok: false; readonly error: ToolFailure } {
    return {
      ok: false,
      error: this.interrupted ?? {
        code: ERROR_CODES.INTERNAL_ERROR,
        message: `${this.name} was interrupted for no recorded reason`,
        retryable: false,
      },
    };
  }

  /** Waits for `promise`, or for an interruption (deadline, abort), whichever comes first. */
  race<T>(promise: Promise<T>): Promise<T | Interrupted> {
    if (this.interrupted !== undefined) {
      promise.catch(noop);
      return Promise.resolve(INTERRUPTED);
    }
    return new Promise<T | Interrupted>((resolve, reject) => {
      this.wake = resolve as (value: Interrupted | undefined) => void;
      promise.then(resolve, reject);
    });
  }

  /** Waits in the plugin's queue; resolves undefined when granted a slot, or INTERRUPTED. */
  waitForSlot(gate: PluginGate): Promise<Interrupted | undefined> {
    return new Promise((resolve) => {
      this.wake = resolve;
      gate.enqueue(this);
    });
  }

  grant(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.(undefined);
  }
}

/**
 * Creates a ToolRuntime. Nothing is loaded or compiled until the first call: implementations are
 * resolved per plugin on first use, schemas compiled on first use and cached by content hash.
 */
export function createToolRuntime(options: CreateToolRuntimeOptions): ToolRuntime {
  const section = options.config.runtime;
  const logger = options.logger ?? silentLogger;
  const granted = new Set<string>();
  for (const capability of section.capabilities) {
    if (capability === '*') for (const standard of CAPABILITIES) granted.add(standard);
    else granted.add(capability);
  }
  const settings: RuntimeSettings = {
    granted,
    policy: section.policy,
    allow: section.policy.allow.map(compileToolGlob),
    maxRetries: section.max_retries,
    capMs: section.tool_timeout_seconds * 1000,
    maxOutputBytes: section.max_output_bytes,
    maxConcurrency: section.max_concurrency,
    backoffMs: section.retry_backoff_ms,
  };
  const catalog = options.catalog;
  const resolver = options.implementations;
  const approve = options.approve;
  const audit: AuditSink | undefined =
    options.auditLog ?? (section.audit_log !== '' ? createFileAuditLog({ path: section.audit_log, logger }) : undefined);
  // ajv and re2js are loaded with the first call's validation, not at startup: a host that only
  // lists tools (the CLI, an MCP tools/list) never pays for them.
  // Single flight: concurrent first calls share one import and one cache (a cache each would
  // compile every schema once per call and stall a cold burst).
  let validators: SchemaValidatorCache | undefined;
  let validatorsLoading: Promise<SchemaValidatorCache> | undefined;
  const loadValidators = (): Promise<SchemaValidatorCache> =>
    (validatorsLoading ??= import('./SchemaValidatorCache.ts').then(
      (m) => (validators = m.createSchemaValidatorCache()),
      (error: unknown) => {
        validatorsLoading = undefined; // let the next call try again
        throw error;
      },
    ));
  const scheduler = new DeadlineScheduler();
  const entries = new Map<string, ToolEntry>();
  const gates = new Map<string, PluginGate>();
  let hooks: readonly ExecutionHook[] = options.hooks ? [...options.hooks] : [];
  let disposed = false;
  // Made on the first call without an id, so creating a runtime never loads node:crypto.
  let idPrefix: string | undefined;
  let idCounter = 0;

  const emit = (event: ExecutionEvent): void => {
    for (const hook of hooks) {
      try {
        const result = hook(event);
        if (result !== undefined && typeof (result as Promise<void>).then === 'function') {
          (result as Promise<void>).then(undefined, (error: unknown) => hookFailed(event, error));
        }
      } catch (error) {
        hookFailed(event, error);
      }
    }
  };
  const hookFailed = (event: ExecutionEvent, error: unknown): void => {
    logger.warn(`an execution hook failed on the ${event.type} event of ${event.tool}; the call goes on`, {
      callId: event.callId,
      error: error instanceof Error ? error.message : String(error),
    });
  };

  const gateFor = (pluginId: string): PluginGate => {
    let gate = gates.get(pluginId);
    if (gate === undefined) {
      gate = new PluginGate(pluginId, settings.maxConcurrency);
      gates.set(pluginId, gate);
    }
    return gate;
  };

  const entryFor = (descriptor: RuntimeToolDescriptor): ToolEntry => {
    let entry = entries.get(descriptor.name);
    if (entry === undefined || entry.descriptor !== descriptor) {
      entry = new ToolEntry(descriptor, gateFor(descriptor.plugin), settings);
      entries.set(descriptor.name, entry);
    }
    return entry;
  };

  const implementationOf = (gate: PluginGate): PluginImplementation | undefined => {
    if (!gate.resolved) {
      gate.impl = typeof resolver === 'function' ? resolver(gate.id) : resolver.get(gate.id);
      gate.resolved = true;
    }
    return gate.impl;
  };

  const fail = (code: string, message: string, retryable = false): ToolOutcome => ({ ok: false, error: { code, message, retryable } });

  /** Starts an in-process implementation that canonicalizes (it must load to say so); errors surface on the call. */
  const prefetch = (gate: PluginGate): void => {
    let impl: PluginImplementation | undefined;
    try {
      impl = implementationOf(gate);
    } catch {
      return; // reported by the call's own resolution step
    }
    if (impl?.canonicalize === undefined || impl.canonicalizes === undefined) return;
    const state = impl.state();
    if (state !== 'unloaded' && state !== 'initializing') return;
    const loading = impl;
    gate.starting = Promise.resolve()
      .then(() => loading.start())
      .catch(noop);
  };

  const finish = (call: Invocation, request: ToolRequest, outcome: ToolOutcome, started: number): ToolOutcome => {
    scheduler.remove(call);
    if (hooks.length > 0 || audit !== undefined) {
      const durationMs = performance.now() - started;
      const argKeys = keysOf(request.input);
      if (hooks.length > 0) {
        emit({ type: 'outcome', callId: call.callId, tool: call.name, outcome, durationMs, attempts: call.attempts, argKeys });
      }
      if (audit !== undefined) {
        const record: AuditRecord = {
          ts: new Date().toISOString(),
          callId: call.callId,
          tool: call.name,
          argKeys,
          ok: outcome.ok,
          outcome: outcome.ok ? 'OK' : outcome.error.code,
          durationMs: Math.round(durationMs * 1000) / 1000,
          attempts: call.attempts,
        };
        try {
          audit.write(record);
        } catch (error) {
          logger.error('the audit log failed to take a record', {
            callId: call.callId,
            error: error instanceof Error ? error.message : String(error),
          });
        }
      }
    }
    return outcome;
  };

  const invoke = async (request: ToolRequest, options?: InvokeOptions): Promise<ToolOutcome> => {
    const started = performance.now();
    const name = typeof request?.name === 'string' ? request.name : String(request?.name);
    const call = new Invocation(
      typeof request?.callId === 'string' && request.callId !== ''
        ? request.callId
        : (idPrefix ??= `call-${lazyCrypto().randomBytes(4).toString('hex')}-`) + ++idCounter,
      name,
    );
    if (disposed) return finish(call, request, fail(ERROR_CODES.ABORTED, `the runtime was shut down; ${name} was not run`), started);
    const signal = options?.signal;
    if (options?.onProgress !== undefined) call.onProgress = options.onProgress;
    let onAbort: (() => void) | undefined;
    if (signal !== undefined) {
      if (signal.aborted)
        return finish(call, request, fail(ERROR_CODES.ABORTED, `the caller aborted the call to ${name} before it started`), started);
      onAbort = () => call.interrupt({ code: ERROR_CODES.ABORTED, message: `the caller aborted the call to ${name}`, retryable: false });
      signal.addEventListener('abort', onAbort, { once: true });
    }
    // Stages 1–6 run inline (one async frame per call); each early end assigns `outcome` and leaves the block.
    let outcome: ToolOutcome | undefined;
    try {
      stages: {
        const observed = hooks.length > 0;

        // 1. lookup
        const found = catalog.lookup(name);
        let descriptor: RuntimeToolDescriptor;
        if (found.status === 'offered') {
          descriptor = found.descriptor;
        } else if (found.status === 'unavailable' && found.descriptor !== undefined && RUNTIME_STAGE_CODES.has(found.reason.code)) {
          descriptor = found.descriptor;
        } else {
          if (observed)
            emit({
              type: 'lookup',
              callId: call.callId,
              tool: name,
              status: found.status,
              plugin: found.status === 'unavailable' ? found.descriptor?.plugin : undefined,
            });
          if (found.status === 'unavailable') {
            const reason = found.reason;
            // A catalog reason usually names the tool already; do not say it twice.
            const said = reason.message.startsWith(name) ? reason.message : `${name} is not available now: ${reason.message}`;
            outcome = fail(ERROR_CODES.TOOL_UNAVAILABLE, `${said} (${reason.code})`);
            break stages;
          }
          outcome = fail(
            ERROR_CODES.TOOL_NOT_FOUND,
            found.nearest !== undefined
              ? `no tool is named ${name}; did you mean ${found.nearest}?`
              : `no tool is named ${name}; list the offered tools with \`trellis tools list\``,
          );
          break stages;
        }
        if (observed) emit({ type: 'lookup', callId: call.callId, tool: name, status: 'offered', plugin: descriptor.plugin });
        const entry = entryFor(descriptor);
        const gate = entry.gate;
        call.gate = gate;
        call.tool = descriptor.tool;

        // The deadline starts at invoke; from here on every wait is raced against it.
        let timeoutMs = entry.deadlineMs;
        const callerMs = options?.deadlineMs;
        if (callerMs !== undefined && callerMs < timeoutMs) timeoutMs = callerMs > 0 ? callerMs : 0;
        call.timeoutMs = timeoutMs;
        call.deadlineAt = started + timeoutMs;
        if (timeoutMs <= 0) call.expire();
        else scheduler.add(call);

        // 2. validate
        let schema = entry.schema;
        if (schema === undefined) {
          // Bundled schemas were checked against the meta-schema when the build embedded them.
          if (validators === undefined) {
            // Cold: load the plugin alongside the validator, so the burst waits once, not twice.
            if (gate.starting === undefined) prefetch(gate);
            await loadValidators();
          }
          schema = validators!.get(descriptor.inputSchema, { trusted: descriptor.source === 'bundled' });
          entry.schema = schema;
        }
        if (!schema.ok) {
          if (observed) emit({ type: 'validate', callId: call.callId, tool: name, ok: false, errors: [schema.problem] });
          outcome = fail(
            ERROR_CODES.SCHEMA_UNSAFE,
            `the input schema of ${name} cannot be used safely: ${schema.problem}; the plugin ${descriptor.plugin} must fix its schema`,
          );
          break stages;
        }
        let input: unknown = request.input === undefined ? {} : request.input;
        const tooDeep = findTooDeep(input);
        if (tooDeep !== undefined) {
          if (observed) emit({ type: 'validate', callId: call.callId, tool: name, ok: false, errors: [tooDeep] });
          outcome = fail(ERROR_CODES.INPUT_INVALID, `invalid arguments for ${name}:\n${tooDeep}`);
          break stages;
        }
        if (schema.fillsDefaults) {
          try {
            input = structuredClone(input);
          } catch {
            if (observed) emit({ type: 'validate', callId: call.callId, tool: name, ok: false, errors: ['(root): must be plain JSON'] });
            outcome = fail(
              ERROR_CODES.INPUT_INVALID,
              `invalid arguments for ${name}:\n(root): must be plain JSON (no functions, symbols or class instances)`,
            );
            break stages;
          }
        }
        const errors = schema.check(input);
        if (observed) emit({ type: 'validate', callId: call.callId, tool: name, ok: errors === undefined, errors: errors ?? NO_STRINGS });
        if (errors !== undefined) {
          outcome = fail(ERROR_CODES.INPUT_INVALID, `invalid arguments for ${name}:\n${errors.join('\n')}`);
          break stages;
        }
        call.input = input;

        // 3. capability
        if (observed) emit({ type: 'capability', callId: call.callId, tool: name, required: entry.required, missing: entry.missing });
        if (entry.missing.length > 0) {
          outcome = fail(
            ERROR_CODES.CAPABILITY_DENIED,
            `${name} needs ${entry.missing.join(', ')}, which [runtime] capabilities does not grant; add ${entry.missing.length === 1 ? 'it' : 'them'} to [runtime] capabilities in runtime.toml to allow this tool`,
          );
          break stages;
        }

        // 4. canonicalize
        let impl: PluginImplementation | undefined;
        try {
          impl = implementationOf(gate);
        } catch (error) {
          outcome = fail(
            ERROR_CODES.PLUGIN_LOAD_FAILED,
            `the implementation of plugin ${gate.id} could not be created: ${error instanceof Error ? error.message : String(error)}`,
          );
          break stages;
        }
        if (impl === undefined) {
          outcome = fail(ERROR_CODES.TOOL_UNAVAILABLE, `${name} is not available: this host has no implementation for plugin ${gate.id}`);
          break stages;
        }
        let summary: Readonly<Record<string, unknown>> | undefined;
        let canonicalizes = impl.canonicalize !== undefined && impl.canonicalizes?.(call.tool) !== false;
        if (canonicalizes && impl.canonicalizes !== undefined && (impl.state() === 'unloaded' || impl.state() === 'initializing')) {
          // Not loaded, so it cannot yet say whether this tool canonicalizes: a burst of first
          // calls waits for one shared start instead of each asking (and loading) on its own.
          const loading = impl;
          gate.starting ??= Promise.resolve()
            .then(() => loading.start())
            .catch(noop);
          if ((await call.race(gate.starting)) === INTERRUPTED) {
            outcome = call.interruption();
            break stages;
          }
          canonicalizes = impl.canonicalizes(call.tool) !== false;
        }
        if (canonicalizes) {
          let result: { input: unknown; summary?: Record<string, unknown> } | Interrupted;
          try {
            result = await call.race(
              (impl.canonicalize as NonNullable<PluginImplementation['canonicalize']>)(call.tool, input, call.signal, call),
            );
          } catch (thrown) {
            const failure = failureFromThrown(thrown, name);
            if (observed) emit({ type: 'canonicalize', callId: call.callId, tool: name, ran: true, ok: false });
            // A ToolError is the tool refusing its arguments with a precise code (PATH_NOT_ALLOWED, …):
            // keep it. Anything else thrown here is a bug in the hook.
            if (isToolError(thrown) || PASS_THROUGH_CODES.has(failure.code)) {
              outcome = { ok: false, error: failure };
              break stages;
            }
            outcome = fail(ERROR_CODES.CANONICALIZE_FAILED, `${name} could not canonicalize its arguments: ${failure.message}`);
            break stages;
          }
          if (result === INTERRUPTED) {
            outcome = call.interruption();
            break stages;
          }
          input = result.input;
          summary = result.summary;
          call.input = input;
          if (observed) emit({ type: 'canonicalize', callId: call.callId, tool: name, ran: true, ok: true, summary });
        } else if (observed) {
          emit({ type: 'canonicalize', callId: call.callId, tool: name, ran: false, ok: true });
        }

        // 5. policy
        if (entry.denied !== undefined) {
          if (observed)
            emit({ type: 'policy', callId: call.callId, tool: name, decision: 'denied', approval: 'none', rule: entry.deniedRule });
          outcome = fail(ERROR_CODES.POLICY_DENIED, entry.denied);
          break stages;
        }
        if (entry.ask !== 'none') {
          const why = entry.ask === 'policy' ? `[runtime.policy] ask = "${entry.askRule}"` : `its contract says approval = "ask"`;
          let approved: boolean | Interrupted = false;
          let refusal = 'the approver said no';
          if (approve === undefined) {
            refusal =
              'this host has no way to ask (no TTY or approval hook); run it from a terminal, or remove it from [runtime.policy] ask';
          } else {
            const request: ApprovalRequest = {
              callId: call.callId,
              tool: name,
              plugin: descriptor.plugin,
              input,
              summary,
              reason: entry.ask,
              rule: entry.askRule,
              contract: descriptor.contract,
              signal: call.signal,
            };
            try {
              call.awaitingApproval = true;
              const answer = await call.race(Promise.resolve().then(() => approve(request)));
              call.awaitingApproval = false;
              if (answer === INTERRUPTED) approved = INTERRUPTED;
              else if (typeof answer === 'object' && answer !== null && typeof answer.refused === 'string') refusal = answer.refused;
              else approved = answer === true;
            } catch (error) {
              logger.warn(`the approval hook failed for ${name}; the call is refused`, {
                callId: call.callId,
                error: error instanceof Error ? error.message : String(error),
              });
              refusal = 'the approval hook failed';
            }
          }
          if (approved === INTERRUPTED) {
            outcome = call.interruption();
            break stages;
          }
          if (approved !== true) {
            if (observed)
              emit({ type: 'policy', callId: call.callId, tool: name, decision: 'refused', approval: entry.ask, rule: entry.askRule });
            outcome = fail(ERROR_CODES.APPROVAL_DENIED, `${name} needs approval (${why}) and was not approved: ${refusal}`);
            break stages;
          }
          if (observed)
            emit({ type: 'policy', callId: call.callId, tool: name, decision: 'approved', approval: entry.ask, rule: entry.askRule });
        } else if (observed) {
          emit({ type: 'policy', callId: call.callId, tool: name, decision: 'allowed', approval: 'none' });
        }

        // 6. attempts
        const idempotent = descriptor.contract.idempotent;
        for (let attempt = 1; ; attempt++) {
          if (!gate.tryAcquire()) {
            const waited = await call.waitForSlot(gate);
            if (waited === INTERRUPTED) {
              outcome = call.interruption();
              break stages;
            }
          }
          if (call.interrupted !== undefined) {
            gate.release();
            outcome = { ok: false, error: call.interrupted };
            break stages;
          }
          call.attempts = attempt;
          if (observed) emit({ type: 'attempt', callId: call.callId, tool: name, attempt, phase: 'start' });
          let result: ImplementationOutcome | Interrupted;
          try {
            result = await call.race(impl.call(call));
          } catch (thrown) {
            result = { ok: false, error: failureFromThrown(thrown, name) };
          }
          gate.release();
          if (result === INTERRUPTED) {
            if (observed)
              emit({
                type: 'attempt',
                callId: call.callId,
                tool: name,
                attempt,
                phase: 'end',
                ok: false,
                code: call.interruption().error.code,
                retrying: false,
              });
            outcome = call.interruption();
            break stages;
          }
          let attemptOutcome: ToolOutcome = result;
          if (result === null || typeof result !== 'object' || typeof result.ok !== 'boolean') {
            attemptOutcome = fail(
              ERROR_CODES.INTERNAL_ERROR,
              `the implementation of plugin ${gate.id} returned something that is not an outcome for ${name}`,
            );
          } else if (result.ok) {
            const problem = checkOutput(result.value, name, settings.maxOutputBytes);
            if (problem !== undefined) attemptOutcome = { ok: false, error: problem };
            else if (result.value === undefined) attemptOutcome = { ok: true, value: null };
          }
          if (attemptOutcome.ok) {
            if (observed) emit({ type: 'attempt', callId: call.callId, tool: name, attempt, phase: 'end', ok: true, retrying: false });
            outcome = attemptOutcome;
            break stages;
          }
          const error = attemptOutcome.error;
          const undispatched = (result as { notDispatched?: unknown }).notDispatched === true;
          let retrying = error.retryable === true && attempt < entry.maxAttempts && (idempotent || undispatched);
          let delayMs = 0;
          if (retrying) {
            delayMs = Math.round(settings.backoffMs * 2 ** (attempt - 1) * (0.5 + Math.random() / 2));
            if (performance.now() + delayMs >= call.deadlineAt) retrying = false;
          }
          if (observed)
            emit({
              type: 'attempt',
              callId: call.callId,
              tool: name,
              attempt,
              phase: 'end',
              ok: false,
              code: error.code,
              retrying,
              delayMs: retrying ? delayMs : undefined,
            });
          if (!retrying) {
            outcome = attemptOutcome;
            break stages;
          }
          if (delayMs > 0) {
            let timer: ReturnType<typeof setTimeout> | undefined;
            const slept = await call.race(new Promise<void>((resolve) => (timer = setTimeout(resolve, delayMs))));
            clearTimeout(timer);
            if (slept === INTERRUPTED) {
              outcome = call.interruption();
              break stages;
            }
          }
        }
      }
    } catch (bug) {
      logger.error(`internal error while running ${name}`, {
        callId: call.callId,
        error: bug instanceof Error ? (bug.stack ?? bug.message) : String(bug),
      });
      outcome = fail(
        ERROR_CODES.INTERNAL_ERROR,
        `Trellis failed while running ${name}: ${bug instanceof Error ? bug.message : String(bug)} (a bug in Trellis; please report it)`,
      );
    }
    if (onAbort !== undefined) signal?.removeEventListener('abort', onAbort);
    return finish(
      call,
      request,
      outcome ?? fail(ERROR_CODES.INTERNAL_ERROR, `Trellis ended ${name} without an outcome (a bug in Trellis; please report it)`),
      started,
    );
  };

  return {
    invoke,
    addHook(hook) {
      hooks = [...hooks, hook];
      return () => {
        hooks = hooks.filter((h) => h !== hook);
      };
    },
    async dispose() {
      if (disposed) return;
      disposed = true;
      // Every call past lookup is in the scheduler (deadlines are always finite: tool_timeout_seconds caps them).
      for (const call of scheduler.items() as Invocation[]) {
        call.interrupt({
          code: ERROR_CODES.ABORTED,
          message: `the runtime was shut down while ${call.name} was running`,
          retryable: false,
        });
      }
      scheduler.clear();
      const impls = [...gates.values()].map((gate) => gate.impl).filter((impl): impl is PluginImplementation => impl !== undefined);
      await Promise.allSettled(impls.map((impl) => Promise.resolve().then(() => impl.dispose())));
      await audit?.close();
    },
  };
}

function keysOf(input: unknown): readonly string[] {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return NO_STRINGS;
  const keys = Object.keys(input);
  return keys.length === 0 ? NO_STRINGS : keys.sort();
}
