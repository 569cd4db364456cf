import { ERROR_CODES, failOutcome, type ToolOutcome } from '@trellis/sdk';
import { PARKED, type CallContext, type Parked, type StageResult } from './CallContext.ts';
import { INVOKE_STAGES } from './invokeStages.ts';
import { recordOutcome } from './recordOutcome.ts';

/**
 * Runs a new call's stages; the caller's promise of its outcome. Stages run synchronously until
 * one ends the call, returns a promise (a wait of the call's own: the attempt, an approval) or
 * parks the call in a wait list; a parked call is run on by `resumeStages`.
 */
export function runCall(ctx: CallContext): Promise<ToolOutcome> {
  const result = runStages(ctx);
  if (result === PARKED) return parkedOutcome(ctx);
  return result instanceof Promise ? result : Promise.resolve(result);
}

/** Runs a parked call on from its continuation; its outcome settles the caller's promise. */
export function resumeStages(ctx: CallContext): void {
  const settle = ctx.settle;
  if (settle === undefined) return; // not reachable: a call parks before anything can resume it
  const result = runStages(ctx);
  if (result === PARKED) return;
  if (result instanceof Promise) void result.then(settle);
  else settle(result);
}

/** The promise a parked call's caller holds; `resumeStages` settles it. */
function parkedOutcome(ctx: CallContext): Promise<ToolOutcome> {
  return new Promise<ToolOutcome>((resolve) => {
    ctx.settle = resolve;
  });
}

function runStages(ctx: CallContext): ToolOutcome | Promise<ToolOutcome> | Parked {
  for (;;) {
    let step: StageResult | Promise<StageResult> | Parked;
    try {
      const continuation = ctx.continuation;
      if (continuation !== undefined) {
        ctx.continuation = undefined;
        step = continuation(ctx);
      } else {
        const stage = INVOKE_STAGES[ctx.stage];
        if (stage === undefined) {
          return recordOutcome(
            ctx,
            failOutcome(ERROR_CODES.INTERNAL_ERROR, `Trellis ended ${ctx.name} without an outcome (a bug in Trellis; please report it)`),
          );
        }
        step = stage(ctx);
      }
    } catch (bug) {
      return recordOutcome(ctx, internalFailure(ctx, bug));
    }
    if (step === undefined) {
      ctx.stage += 1;
    } else if (step === PARKED) {
      return PARKED;
    } else if (step instanceof Promise) {
      return step.then(
        (result) => afterWait(ctx, result),
        (bug: unknown) => recordOutcome(ctx, internalFailure(ctx, bug)),
      );
    } else {
      return recordOutcome(ctx, step);
    }
  }
}

/** After a stage's own wait: the call ends, or runs on from the next stage. */
function afterWait(ctx: CallContext, result: StageResult): ToolOutcome | Promise<ToolOutcome> {
  if (result !== undefined) return recordOutcome(ctx, result);
  ctx.stage += 1;
  const next = runStages(ctx);
  return next === PARKED ? parkedOutcome(ctx) : next;
}

/** A stage threw: a bug in Trellis, logged and reported as such. */
function internalFailure(ctx: CallContext, bug: unknown): ToolOutcome {
  ctx.core.logger.error(`internal error while running ${ctx.name}`, {
    callId: ctx.call.callId,
    error: bug instanceof Error ? (bug.stack ?? bug.message) : String(bug),
  });
  return failOutcome(
    ERROR_CODES.INTERNAL_ERROR,
    `Trellis failed while running ${ctx.name}: ${bug instanceof Error ? bug.message : String(bug)} (a bug in Trellis; please report it)`,
  );
}
