import { ERROR_CODES, failOutcome, isToolError } from '@trellis/sdk';
import { failureFromThrown } from '../outcomeFromThrown.ts';
import type { PluginImplementation } from '../PluginImplementation.ts';
import { type CallContext, type Parked, type StageResult } from './CallContext.ts';
import { INTERRUPTED, type Interrupted } from './Invocation.ts';

// Failures of canonicalize that are not the tool refusing its arguments.
const PASS_THROUGH_CODES: ReadonlySet<string> = new Set([
  ERROR_CODES.PLUGIN_LOAD_FAILED,
  ERROR_CODES.PLUGIN_CRASHED,
  ERROR_CODES.PLUGIN_UNAVAILABLE,
  ERROR_CODES.PROTOCOL_ERROR,
  ERROR_CODES.HTTP_ERROR,
  ERROR_CODES.TIMEOUT,
  ERROR_CODES.ABORTED,
]);

/** Finds the plugin's implementation (`PLUGIN_LOAD_FAILED`, `TOOL_UNAVAILABLE`). */
export function resolveImplementation(ctx: CallContext): StageResult {
  const gate = ctx.entry.gate;
  let impl: PluginImplementation | undefined;
  try {
    impl = ctx.core.implementationOf(gate);
  } catch (error) {
    return failOutcome(
      ERROR_CODES.PLUGIN_LOAD_FAILED,
      `the implementation of plugin ${gate.id} could not be created: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  if (impl === undefined) {
    return failOutcome(ERROR_CODES.TOOL_UNAVAILABLE, `${ctx.name} is not available: this host has no implementation for plugin ${gate.id}`);
  }
  ctx.impl = impl;
  return undefined;
}

/** Runs the tool's canonicalize hook, when it has one, on the validated input. */
export function canonicalizeInput(ctx: CallContext): StageResult | Promise<StageResult> | Parked {
  const { impl, call } = ctx;
  if (impl.canonicalize === undefined || impl.canonicalizes?.(call.tool) === false) return skipped(ctx);
  if (impl.canonicalizes !== undefined && (impl.state() === 'unloaded' || impl.state() === 'initializing'))
    return ctx.core.startWait(ctx.entry.gate, impl).add(ctx, canonicalizeAfterStart);
  return canonicalizeNow(ctx);
}

/**
 * The implementation was not loaded, so it could not yet say whether this tool canonicalizes: a
 * burst of first calls waits in one list for one shared start instead of each asking (and loading).
 */
function canonicalizeAfterStart(ctx: CallContext): StageResult | Promise<StageResult> {
  const { impl, call } = ctx;
  if (call.interrupted !== undefined) return call.interruption();
  if (impl.canonicalizes?.(call.tool) === false) return skipped(ctx);
  return canonicalizeNow(ctx);
}

/** Calls the hook, raced against the deadline; its input and summary replace the validated ones. */
async function canonicalizeNow(ctx: CallContext): Promise<StageResult> {
  const { core, impl, call, name } = ctx;
  let result: { input: unknown; summary?: Record<string, unknown> } | Interrupted;
  try {
    // Called as a method: an implementation may be a class instance.
    result = await call.race(
      (impl.canonicalize as NonNullable<PluginImplementation['canonicalize']>)(call.tool, call.input, call.signal, call),
    );
  } catch (thrown) {
    const failure = failureFromThrown(thrown, name);
    if (ctx.observed) core.emit({ type: 'canonicalize', callId: call.callId, tool: name, ran: true, ok: false });
    // A ToolError is the tool refusing its arguments with a precise code (PATH_NOT_ALLOWED, …):
    // keep it. Anything else thrown here is a bug in the hook.
    if (isToolError(thrown) || PASS_THROUGH_CODES.has(failure.code)) return { ok: false, error: failure };
    return failOutcome(ERROR_CODES.CANONICALIZE_FAILED, `${name} could not canonicalize its arguments: ${failure.message}`);
  }
  if (result === INTERRUPTED) return call.interruption();
  call.input = result.input;
  ctx.summary = result.summary;
  if (ctx.observed) core.emit({ type: 'canonicalize', callId: call.callId, tool: name, ran: true, ok: true, summary: result.summary });
  return undefined;
}

function skipped(ctx: CallContext): undefined {
  if (ctx.observed) ctx.core.emit({ type: 'canonicalize', callId: ctx.call.callId, tool: ctx.name, ran: false, ok: true });
  return undefined;
}
