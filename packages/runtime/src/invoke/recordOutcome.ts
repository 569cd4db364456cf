import type { ToolOutcome } from '@trellis/sdk';
import type { AuditRecord } from '../AuditLog.ts';
import type { CallContext } from './CallContext.ts';
import { NO_STRINGS } from './ToolEntry.ts';

/**
 * The last step of every call, however it ended: takes the call off the deadline clock and the
 * caller's signal, emits the `outcome` event and writes the audit record (argument keys only,
 * never values).
 */
export function recordOutcome(ctx: CallContext, outcome: ToolOutcome): ToolOutcome {
  const { core, call } = ctx;
  core.scheduler.remove(call);
  if (ctx.onAbort !== undefined) ctx.options?.signal?.removeEventListener('abort', ctx.onAbort);
  if (core.hooks.length === 0 && core.audit === undefined) return outcome;
  const durationMs = performance.now() - ctx.started;
  const argKeys = keysOf(ctx.request?.input);
  if (core.hooks.length > 0) {
    core.emit({ type: 'outcome', callId: call.callId, tool: call.name, outcome, durationMs, attempts: call.attempts, argKeys });
  }
  if (core.audit !== undefined) {
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
      core.audit.write(record);
    } catch (error) {
      core.logger.error('the audit log failed to take a record', {
        callId: call.callId,
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }
  return outcome;
}

function keysOf(input: unknown): readonly string[] {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return NO_STRINGS;
  const keys = Object.keys(input);
  return keys.length === 0 ? NO_STRINGS : keys.sort();
}
