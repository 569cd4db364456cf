import { ERROR_CODES, failOutcome, type ToolFailure, type ToolOutcome } from '@trellis/sdk';
import { checkOutput } from '../checkOutput.ts';
import { failureFromThrown } from '../outcomeFromThrown.ts';
import type { ImplementationOutcome } from '../PluginImplementation.ts';
import { type CallContext, type Parked } from './CallContext.ts';
import { INTERRUPTED, type Interrupted } from './Invocation.ts';

/**
 * Runs attempts until one succeeds, one fails for good, or the call is interrupted. Each
 * attempt takes a slot of the plugin's gate, runs the implementation raced against the deadline
 * and checks its output; a retryable failure is retried with backoff when the tool is idempotent
 * or the call was never dispatched. A call that finds the gate full waits in its queue parked, as
 * a record: a burst of thousands holds no suspended frame per queued call.
 */
export function runAttempts(ctx: CallContext): Promise<ToolOutcome> | Parked {
  const gate = ctx.entry.gate;
  if (gate.tryAcquire()) return attempts(ctx);
  gate.enqueue(ctx.call);
  return ctx.park(attemptsWhenGranted);
}

/** The call left the queue: with a slot (granted), or without one (interrupted, and dequeued). */
function attemptsWhenGranted(ctx: CallContext): Promise<ToolOutcome> | ToolOutcome {
  return ctx.call.granted ? attempts(ctx) : ctx.call.interruption();
}

/** The attempts, the first with the slot the call already holds. */
async function attempts(ctx: CallContext): Promise<ToolOutcome> {
  const { call, entry } = ctx;
  const gate = entry.gate;
  for (let attempt = 1; ; attempt++) {
    if (attempt > 1 && !gate.tryAcquire() && (await call.waitForSlot(gate)) === INTERRUPTED) return call.interruption();
    if (call.interrupted !== undefined) {
      gate.release();
      return { ok: false, error: call.interrupted };
    }
    call.attempts = attempt;
    if (ctx.observed) ctx.core.emit({ type: 'attempt', callId: call.callId, tool: ctx.name, attempt, phase: 'start' });
    let result: ImplementationOutcome | Interrupted;
    try {
      result = await call.race(ctx.impl.call(call));
    } catch (thrown) {
      result = { ok: false, error: failureFromThrown(thrown, ctx.name) };
    }
    gate.release();
    if (result === INTERRUPTED) {
      const interrupted = call.interruption();
      reportAttemptEnd(ctx, attempt, interrupted, undefined);
      return interrupted;
    }
    const outcome = settleAttempt(ctx, result);
    const delayMs = outcome.ok ? undefined : retryDelay(ctx, attempt, outcome.error, result);
    reportAttemptEnd(ctx, attempt, outcome, delayMs);
    if (delayMs === undefined) return outcome;
    if (delayMs > 0 && (await backOff(ctx, delayMs)) === INTERRUPTED) return call.interruption();
  }
}

/** The attempt's outcome as the caller gets it: a malformed result or an output over the cap is a failure. */
function settleAttempt(ctx: CallContext, result: ImplementationOutcome): ToolOutcome {
  if (result === null || typeof result !== 'object' || typeof result.ok !== 'boolean') {
    return failOutcome(
      ERROR_CODES.INTERNAL_ERROR,
      `the implementation of plugin ${ctx.entry.gate.id} returned something that is not an outcome for ${ctx.name}`,
    );
  }
  if (!result.ok) return result;
  const problem = checkOutput(result.value, ctx.name, ctx.core.settings.maxOutputBytes);
  if (problem !== undefined) return { ok: false, error: problem };
  return result.value === undefined ? { ok: true, value: null } : result;
}

/**
 * The backoff before the next attempt (exponential with jitter), or undefined when this failure
 * is final: not retryable, out of attempts, a dispatched call of a non-idempotent tool, or a
 * backoff that would end past the deadline.
 */
function retryDelay(ctx: CallContext, attempt: number, error: ToolFailure, result: ImplementationOutcome): number | undefined {
  if (error.retryable !== true || attempt >= ctx.entry.maxAttempts) return undefined;
  const undispatched = (result as { notDispatched?: unknown }).notDispatched === true;
  if (!ctx.descriptor.contract.idempotent && !undispatched) return undefined;
  const delayMs = Math.round(ctx.core.settings.backoffMs * 2 ** (attempt - 1) * (0.5 + Math.random() / 2));
  return performance.now() + delayMs >= ctx.call.deadlineAt ? undefined : delayMs;
}

/** The `attempt` end event: how the attempt ended and whether another follows (`delayMs` set). */
function reportAttemptEnd(ctx: CallContext, attempt: number, outcome: ToolOutcome, delayMs: number | undefined): void {
  if (!ctx.observed) return;
  const { call, name } = ctx;
  if (outcome.ok) {
    ctx.core.emit({ type: 'attempt', callId: call.callId, tool: name, attempt, phase: 'end', ok: true, retrying: false });
  } else {
    const retrying = delayMs !== undefined;
    ctx.core.emit({
      type: 'attempt',
      callId: call.callId,
      tool: name,
      attempt,
      phase: 'end',
      ok: false,
      code: outcome.error.code,
      retrying,
      delayMs,
    });
  }
}

/** Sleeps `delayMs` before the next attempt, or less when the call is interrupted. */
async function backOff(ctx: CallContext, delayMs: number): Promise<void | Interrupted> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const slept = await ctx.call.race(new Promise<void>((resolve) => (timer = setTimeout(resolve, delayMs))));
  clearTimeout(timer);
  return slept;
}
