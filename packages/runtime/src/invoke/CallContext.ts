import type { ToolOutcome } from '@trellis/sdk';
import type { PluginImplementation } from '../PluginImplementation.ts';
import type { RuntimeToolDescriptor } from '../RuntimeCatalog.ts';
import type { InvokeOptions, ToolRequest } from '../ToolRuntime.ts';
import type { Invocation } from './Invocation.ts';
import type { RuntimeCore } from './RuntimeCore.ts';
import type { ToolEntry } from './ToolEntry.ts';

/**
 * What a stage returns when it put the call in a wait list (a load that many calls need, its
 * plugin's queue) instead of returning a promise: the call holds no suspended async frame while it
 * waits, and `CallContext.resume` runs the continuation it named when the wait ends.
 */
export const PARKED: unique symbol = Symbol('parked');
export type Parked = typeof PARKED;

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
  /** Index in `INVOKE_STAGES` of the stage running or waiting; owned by `runStages`. */
  stage = 0;
  /** While parked: what finishes the current stage when the wait ends (see `park`). */
  continuation: Stage | undefined = undefined;
  /** Resolves the caller's promise while the call is parked; set as it parks (see `runStages`). */
  settle: ((outcome: ToolOutcome | Promise<ToolOutcome>) => void) | undefined = undefined;
  /** The caller's abort listener, removed when the call ends. */
  onAbort: (() => void) | undefined = undefined;

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

  /**
   * Parks the call: `continuation` will finish the current stage when the wait ends, or at once
   * (in a microtask) when the call is interrupted first. The stage then returns `PARKED`.
   */
  park(continuation: Stage): Parked {
    this.continuation = continuation;
    this.call.parked = this;
    return PARKED;
  }

  /** Ends the wait of a parked call and runs it on; a call that is not parked (any more) is left alone. */
  resume(): void {
    if (this.continuation === undefined) return;
    this.call.parked = undefined;
    this.core.resume(this);
  }
}

/** A stage ends the call with an outcome, or returns undefined to let the next stage run. */
export type StageResult = ToolOutcome | undefined;

/**
 * One step of a call; synchronous when it needs no wait, so the common path stays cheap. A wait of
 * the call's own is a promise; a wait in a list that many calls share is `ctx.park(…)`.
 */
export type Stage = (ctx: CallContext) => StageResult | Promise<StageResult> | Parked;
