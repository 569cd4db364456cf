import type {
  LifecycleReport,
  LifecycleState,
  LifecycleTransition,
  PartLifecycleReport,
  ToolFailure,
  ToolOutcome,
  ToolProgress,
  ToolSpec,
} from '@trellis/sdk';

/** Lifecycle of a plugin's implementation, shown by `trellis plugins list` (defined in `@trellis/sdk`). */
export type { LifecycleState } from '@trellis/sdk';

/** An implementation's lifecycle with its parts (each bridged MCP server), as `health()` reports it. */
export interface ImplementationHealth extends LifecycleReport {
  readonly parts?: readonly PartLifecycleReport[];
}

/** One call as the runtime hands it to an implementation, after validation, canonicalization and policy. */
export interface ImplementationCall {
  /** The tool's own name (after `<plugin-id>.`). */
  readonly tool: string;
  readonly input: unknown;
  readonly callId: string;
  /** Aborted at the deadline or when the caller gives up; the implementation must stop its work. */
  readonly signal: AbortSignal;
  /** Absolute deadline, `performance.now()` clock. */
  readonly deadlineAt: number;
  /** Where the tool's progress reports go (the caller's `InvokeOptions.onProgress`); absent when nobody listens. */
  readonly onProgress?: (update: ToolProgress) => void;
  /**
   * Optional (added later): runs `listener` once when the call is interrupted (deadline, caller
   * abort, runtime shutdown), at once if it already was; returns the function that unsubscribes
   * it. The runtime creates `signal` only when it is read, and an AbortSignal with a listener
   * costs more than a whole process-plugin round trip's own work: an implementation that only
   * needs to hear of the interruption (the process adapter) uses this instead.
   */
  onInterrupt?(listener: () => void): () => void;
}

/** Extra facts about a canonicalize request. */
export interface CanonicalizeContext {
  readonly callId: string;
  /** Absolute deadline, `performance.now()` clock. */
  readonly deadlineAt: number;
}

/**
 * What `call` resolves to: a `ToolOutcome`, or a failure marked `notDispatched: true` when the tool
 * never received the call (the child could not be spawned, the connection was refused). The
 * runtime never re-sends a non-idempotent tool's call after it was dispatched; an undispatched
 * failure may be retried even for such a tool (when it is retryable).
 */
export type ImplementationOutcome = ToolOutcome | { readonly ok: false; readonly error: ToolFailure; readonly notDispatched: true };

/**
 * The runtime's view of one plugin's code, whatever runs it: a bundled module in process, a
 * worker thread, a persistent child process, a one-shot script, or an HTTP service. The runtime
 * owns deadlines, retries, queues and hooks; an implementation only runs calls and reports
 * failures as outcomes. `call` must resolve, never reject (the runtime guards it anyway).
 */
export interface PluginImplementation {
  readonly pluginId: string;
  /** Starts the plugin (spawn, handshake, initialize). Idempotent; failures are reported by `call` and `state`. */
  start(signal?: AbortSignal): Promise<void>;
  /** Tools the running plugin reports itself (get_tools, GET /tools), when it does. */
  discoveredTools?(): readonly ToolSpec[] | undefined;
  /** Optional (added later): calls `listener` whenever `discoveredTools()` changes; returns the unsubscribe function. */
  onToolsChanged?(listener: () => void): () => void;
  /** Optional (added later): problems of the plugin's parts (e.g. one MCP server down) while it is active. */
  problems?(): ReadonlyArray<{ readonly code: string; readonly message: string }>;
  /**
   * Optional canonicalization of a call's input, as the tool's own hook would do. `context` (added
   * later, optional) carries the call's id for the tool's context and logs.
   */
  canonicalize?(
    tool: string,
    input: unknown,
    signal: AbortSignal,
    context?: CanonicalizeContext,
  ): Promise<{ input: unknown; summary?: Record<string, unknown> }>;
  /**
   * Optional and cheap (added later): false when the implementation knows the tool has no
   * canonicalize hook, so the runtime skips the stage (and the AbortSignal it would need).
   */
  canonicalizes?(tool: string): boolean;
  call(call: ImplementationCall): Promise<ImplementationOutcome>;
  state(): LifecycleState;
  /** The last error that put the plugin in `error` or `disabled`, if any. */
  lastError?(): string | undefined;
  /**
   * Optional (added for `trellis doctor`): one health check now, under `signal` (`health_check`
   * for process plugins, `GET /health` for HTTP ones). Only reports; it never restarts the plugin.
   */
  checkHealth?(signal: AbortSignal): Promise<{ readonly healthy: boolean; readonly message?: string }>;
  /** Optional (added with the health monitor): the whole lifecycle record, parts included. */
  health?(): ImplementationHealth;
  /** Optional (added with the health monitor): every lifecycle transition, the parts' included; returns the unsubscribe function. */
  onLifecycleChange?(listener: (transition: LifecycleTransition) => void): () => void;
  /** Shuts down: `shutdown` request, SIGTERM, SIGKILL to the group; resolves when nothing is left running. */
  dispose(): Promise<void>;
}
