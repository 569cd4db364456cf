import { ERROR_CODES, failOutcome } from '@trellis/sdk';
import { type CallContext, type StageResult } from './CallContext.ts';

/** The tool's required capabilities must all be in `[runtime] capabilities` (`CAPABILITY_DENIED`). */
export function checkCapabilities(ctx: CallContext): StageResult {
  const { entry, call, name } = ctx;
  if (ctx.observed)
    ctx.core.emit({ type: 'capability', callId: call.callId, tool: name, required: entry.required, missing: entry.missing });
  if (entry.missing.length === 0) return undefined;
  return failOutcome(
    ERROR_CODES.CAPABILITY_DENIED,
    `${name} needs ${entry.missing.join(', ')}, which [runtime] capabilities does not grant; add ${entry.missing.length === 1 ? 'it' : 'them'} to [runtime] capabilities in runtime.toml to allow this tool`,
  );
}
