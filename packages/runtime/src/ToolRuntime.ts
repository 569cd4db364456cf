import type { RuntimeConfig } from '@trellis/config';
import {
  CAPABILITIES,
  ERROR_CODES,
  failOutcome,
  silentLogger,
  type Logger,
  type ToolContract,
  type ToolOutcome,
  type ToolProgress,
} from '@trellis/sdk';
import { compileToolGlob } from '@trellis/sdk/internal';
import type { AuditSink } from './AuditLog.ts';
import type { SchemaValidatorCache } from './SchemaValidatorCache.ts';
import { createFileAuditLog } from './AuditLog.ts';
import type { ExecutionHook } from './ExecutionEvent.ts';
import { CallContext } from './invoke/CallContext.ts';
import { Invocation } from './invoke/Invocation.ts';
import { recordOutcome } from './invoke/recordOutcome.ts';
import { RuntimeCore } from './invoke/RuntimeCore.ts';
import { runCall } from './invoke/runStages.ts';
import type { PluginImplementation } from './PluginImplementation.ts';
import type { PrecompiledValidator } from './schemaCheck.ts';
import type { RuntimeCatalog } from './RuntimeCatalog.ts';

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
  /**
   * Optional (added for live reload): loads the schema validator cache to use instead of one of the
   * runtime's own, with the first call's validation. A live host hands every generation's runtime
   * the same one, so a new generation's first calls do not compile every input schema — and ajv's
   * meta-schema — again. The cache must use the default limits (`createSchemaValidatorCache()`).
   */
  readonly loadValidators?: () => Promise<SchemaValidatorCache>;
  /**
   * Validators compiled ahead of time, keyed by the input schema object a descriptor carries
   * (`trellis build` makes them for the bundled tools). A tool whose schema is here validates its
   * first call without loading ajv; any other schema is compiled on first use.
   */
  readonly precompiled?: ReadonlyMap<object, PrecompiledValidator>;
  /**
   * Start loading the schema validator (ajv) now, in the background, rather than with the first
   * call that needs it: for hosts that surely will (an external plugin's schemas are compiled at
   * run time), so the import happens while the host is idle, not inside its first burst of calls.
   */
  readonly preloadValidators?: boolean;
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

/**
 * Creates a ToolRuntime. Nothing is loaded or compiled until the first call: implementations are
 * resolved per plugin on first use, schemas compiled on first use and cached by content hash.
 * A call runs `INVOKE_STAGES` (invoke/invokeStages.ts) in order, sharing one `CallContext`
 * (invoke/runStages.ts drives them).
 */
export function createToolRuntime(options: CreateToolRuntimeOptions): ToolRuntime {
  const section = options.config.runtime;
  const logger = options.logger ?? silentLogger;
  const granted = new Set<string>();
  for (const capability of section.capabilities) {
    if (capability === '*') for (const standard of CAPABILITIES) granted.add(standard);
    else granted.add(capability);
  }
  const core = new RuntimeCore({
    settings: {
      granted,
      policy: section.policy,
      allow: section.policy.allow.map(compileToolGlob),
      maxRetries: section.max_retries,
      capMs: section.tool_timeout_seconds * 1000,
      maxOutputBytes: section.max_output_bytes,
      maxConcurrency: section.max_concurrency,
      backoffMs: section.retry_backoff_ms,
    },
    catalog: options.catalog,
    implementations: options.implementations,
    approve: options.approve,
    logger,
    audit: options.auditLog ?? (section.audit_log !== '' ? createFileAuditLog({ path: section.audit_log, logger }) : undefined),
    hooks: options.hooks ? [...options.hooks] : [],
    ...(options.loadValidators !== undefined ? { loadValidators: options.loadValidators } : {}),
    precompiled: options.precompiled,
  });

  // Calls that arrive before it lands join the same wait (single flight).
  if (options.preloadValidators === true) core.validatorsWait();

  const invoke = (request: ToolRequest, options?: InvokeOptions): Promise<ToolOutcome> => {
    const started = performance.now();
    const name = typeof request?.name === 'string' ? request.name : String(request?.name);
    const call = new Invocation(core.callIdFor(request?.callId), name);
    const ctx = new CallContext(core, call, request, options, started);
    if (core.disposed)
      return Promise.resolve(recordOutcome(ctx, failOutcome(ERROR_CODES.ABORTED, `the runtime was shut down; ${name} was not run`)));
    const signal = options?.signal;
    if (options?.onProgress !== undefined) call.onProgress = options.onProgress;
    if (signal !== undefined) {
      if (signal.aborted)
        return Promise.resolve(
          recordOutcome(ctx, failOutcome(ERROR_CODES.ABORTED, `the caller aborted the call to ${name} before it started`)),
        );
      ctx.onAbort = () =>
        call.interrupt({ code: ERROR_CODES.ABORTED, message: `the caller aborted the call to ${name}`, retryable: false });
      signal.addEventListener('abort', ctx.onAbort, { once: true });
    }
    return runCall(ctx);
  };

  return {
    invoke,
    addHook(hook) {
      core.hooks = [...core.hooks, hook];
      return () => {
        core.hooks = core.hooks.filter((h) => h !== hook);
      };
    },
    async dispose() {
      if (core.disposed) return;
      core.disposed = true;
      // Every call past lookup is in the scheduler (deadlines are always finite: tool_timeout_seconds caps them).
      for (const call of core.scheduler.items() as Invocation[]) {
        call.interrupt({
          code: ERROR_CODES.ABORTED,
          message: `the runtime was shut down while ${call.name} was running`,
          retryable: false,
        });
      }
      core.scheduler.clear();
      const impls = [...core.gates.values()].map((gate) => gate.impl).filter((impl): impl is PluginImplementation => impl !== undefined);
      await Promise.allSettled(impls.map((impl) => Promise.resolve().then(() => impl.dispose())));
      await core.audit?.close();
    },
  };
}
