import type { ToolOutcome } from '@trellis/sdk';

/** Fields every execution event carries. */
interface ExecutionEventBase {
  /** The call's id (given in the request, or generated). */
  readonly callId: string;
  /** The requested tool name, as the caller spelled it. */
  readonly tool: string;
}

/** Stage 1: the name was looked up in the catalog. */
export interface LookupEvent extends ExecutionEventBase {
  readonly type: 'lookup';
  readonly status: 'offered' | 'unavailable' | 'not_found';
  /** The plugin that owns the tool, when known. */
  readonly plugin?: string;
}

/** Stage 2: the input was checked against the tool's input schema. */
export interface ValidateEvent extends ExecutionEventBase {
  readonly type: 'validate';
  readonly ok: boolean;
  /** `path: message` lines; empty when valid. For an unsafe schema, the one problem. */
  readonly errors: readonly string[];
}

/** Stage 3: the tool's required capabilities were checked against `[runtime] capabilities`. */
export interface CapabilityEvent extends ExecutionEventBase {
  readonly type: 'capability';
  readonly required: readonly string[];
  /** Required but not granted; empty when the call may go on. */
  readonly missing: readonly string[];
}

/** Stage 4: the tool's own canonicalize hook ran (or the tool has none). */
export interface CanonicalizeEvent extends ExecutionEventBase {
  readonly type: 'canonicalize';
  /** False when the tool has no hook and its input runs as validated. */
  readonly ran: boolean;
  readonly ok: boolean;
  /** The hook's secret-free summary of what will run (e.g. the resolved argv). */
  readonly summary?: Readonly<Record<string, unknown>>;
}

/** Stage 5: tool-level policy and, when needed, approval. */
export interface PolicyEvent extends ExecutionEventBase {
  readonly type: 'policy';
  readonly decision: 'allowed' | 'denied' | 'approved' | 'refused';
  /** Why approval was asked: a `[runtime.policy] ask` glob, or the contract's `approval = 'ask'`. */
  readonly approval: 'none' | 'policy' | 'contract';
  /** The glob that decided, when one did. */
  readonly rule?: string;
}

/** Stage 6: one attempt started, or ended. */
export type AttemptEvent = ExecutionEventBase & {
  readonly type: 'attempt';
  /** 1-based. */
  readonly attempt: number;
} & (
    | { readonly phase: 'start' }
    | {
        readonly phase: 'end';
        readonly ok: boolean;
        /** The failure code, when it failed. */
        readonly code?: string;
        /** True when another attempt follows. */
        readonly retrying: boolean;
        /** The backoff before the next attempt, when retrying. */
        readonly delayMs?: number;
      }
  );

/** Stage 7: the call is over. Always the last event of a call, emitted exactly once. */
export interface OutcomeEvent extends ExecutionEventBase {
  readonly type: 'outcome';
  readonly outcome: ToolOutcome;
  /** From invoke to outcome, milliseconds. */
  readonly durationMs: number;
  /** Attempts dispatched (0 when the call ended before stage 6). */
  readonly attempts: number;
  /** The input's top-level keys (never its values). */
  readonly argKeys: readonly string[];
}

/**
 * Everything the runtime tells execution hooks, one event per stage reached, in stage order.
 * Events carry argument keys and summaries, never argument values; the outcome event carries the
 * outcome the caller receives.
 */
export type ExecutionEvent = LookupEvent | ValidateEvent | CapabilityEvent | CanonicalizeEvent | PolicyEvent | AttemptEvent | OutcomeEvent;

/** The `type` of an execution event. */
export type ExecutionEventType = ExecutionEvent['type'];

/**
 * An observer of every call's stages (audit, metrics, tests). Called synchronously; a hook that
 * throws or rejects is logged and never changes the call.
 */
export type ExecutionHook = (event: ExecutionEvent) => void | Promise<void>;
