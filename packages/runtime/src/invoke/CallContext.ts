import type { ToolOutcome } from '@trellis/sdk';
import type { PluginImplementation } from '../PluginImplementation.ts';
import type { RuntimeToolDescriptor } from '../RuntimeCatalog.ts';
import type { InvokeOptions, ToolRequest } from '../ToolRuntime.ts';
import type { Invocation } from './Invocation.ts';
import type { RuntimeCore } from './RuntimeCore.ts';
import type { ToolEntry } from './ToolEntry.ts';

/**
 * What the stages of one call share. Each stage reads what earlier stages set; a stage runs only
 * when every stage before it continued, so the fields marked "set by" are set when it reads them.
 */
export class CallContext {
  /** Whether any hook listens: events are built only then. */
  readonly observed: boolean;
  /** Set by `lookupTool`. */
  descriptor!: RuntimeToolDescriptor;
  /** Set by `lookupTool`. */
  entry!: ToolEntry;
  /** Set by `resolveImplementation`. */
  impl!: PluginImplementation;
  /** The canonicalize hook's secret-free summary; set by `canonicalizeInput` when the hook gave one. */
  summary: Readonly<Record<string, unknown>> | undefined = undefined;

  constructor(
    readonly core: RuntimeCore,
    /** The call as the implementation sees it; holds the input as the stages refine it. */
    readonly call: Invocation,
    readonly request: ToolRequest,
    readonly options: InvokeOptions | undefined,
    /** `performance.now()` at invoke. */
    readonly started: number,
  ) {
    this.observed = core.hooks.length > 0;
  }

  /** The requested tool name, as the caller spelled it. */
  get name(): string {
    return this.call.name;
  }
}

/** A stage ends the call with an outcome, or returns undefined to let the next stage run. */
export type StageResult = ToolOutcome | undefined;

/** One step of a call; synchronous when it needs no wait, so the common path stays cheap. */
export type Stage = (ctx: CallContext) => StageResult | Promise<StageResult>;

/** A failed outcome (not retryable unless said). */
export function failed(code: string, message: string, retryable = false): ToolOutcome {
  return { ok: false, error: { code, message, retryable } };
}
