import { ERROR_CODES, failOutcome } from '@trellis/sdk';
import type { RuntimeToolDescriptor } from '../RuntimeCatalog.ts';
import { type CallContext, type StageResult } from './CallContext.ts';

// Codes a catalog may give for a tool it does not offer, which the runtime's own stages decide
// (and report) themselves.
const RUNTIME_STAGE_CODES: ReadonlySet<string> = new Set([ERROR_CODES.CAPABILITY_DENIED, ERROR_CODES.POLICY_DENIED]);

/** Finds the tool in the catalog (`TOOL_NOT_FOUND`, `TOOL_UNAVAILABLE`) and its entry. */
export function lookupTool(ctx: CallContext): StageResult {
  const { core, call, name } = ctx;
  const found = core.catalog.lookup(name);
  let descriptor: RuntimeToolDescriptor;
  if (found.status === 'offered') {
    descriptor = found.descriptor;
  } else if (found.status === 'unavailable' && found.descriptor !== undefined && RUNTIME_STAGE_CODES.has(found.reason.code)) {
    descriptor = found.descriptor;
  } else {
    if (ctx.observed) {
      const plugin = found.status === 'unavailable' ? found.descriptor?.plugin : undefined;
      core.emit({ type: 'lookup', callId: call.callId, tool: name, status: found.status, plugin });
    }
    if (found.status === 'unavailable') {
      const reason = found.reason;
      // A catalog reason usually names the tool already; do not say it twice.
      const said = reason.message.startsWith(name) ? reason.message : `${name} is not available now: ${reason.message}`;
      return failOutcome(ERROR_CODES.TOOL_UNAVAILABLE, `${said} (${reason.code})`);
    }
    return failOutcome(
      ERROR_CODES.TOOL_NOT_FOUND,
      found.nearest !== undefined
        ? `no tool is named ${name}; did you mean ${found.nearest}?`
        : `no tool is named ${name}; list the offered tools with \`trellis tools list\``,
    );
  }
  if (ctx.observed) core.emit({ type: 'lookup', callId: call.callId, tool: name, status: 'offered', plugin: descriptor.plugin });
  const entry = core.entryFor(descriptor);
  ctx.descriptor = descriptor;
  ctx.entry = entry;
  call.gate = entry.gate;
  call.tool = descriptor.tool;
  return undefined;
}

/**
 * Starts the deadline clock (the tool's, capped by the caller's), counted from invoke.
 * From here on every wait is raced against it, and `dispose` can reach the call.
 */
export function startDeadline(ctx: CallContext): StageResult {
  const call = ctx.call;
  let timeoutMs = ctx.entry.deadlineMs;
  const callerMs = ctx.options?.deadlineMs;
  if (callerMs !== undefined && callerMs < timeoutMs) timeoutMs = callerMs > 0 ? callerMs : 0;
  call.timeoutMs = timeoutMs;
  call.deadlineAt = ctx.started + timeoutMs;
  if (timeoutMs <= 0) call.expire();
  else ctx.core.scheduler.add(call);
  return undefined;
}
