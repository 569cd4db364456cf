import { ERROR_CODES, failOutcome } from '@trellis/sdk';
import type { ApprovalRequest } from '../ToolRuntime.ts';
import { type CallContext, type StageResult } from './CallContext.ts';
import { INTERRUPTED, type Interrupted } from './Invocation.ts';

/** `[runtime.policy]` allow/deny, then approval when a rule or the contract asks (`POLICY_DENIED`, `APPROVAL_DENIED`). */
export function decidePolicy(ctx: CallContext): StageResult | Promise<StageResult> {
  const { core, entry, call, name } = ctx;
  if (entry.denied !== undefined) {
    if (ctx.observed)
      core.emit({ type: 'policy', callId: call.callId, tool: name, decision: 'denied', approval: 'none', rule: entry.deniedRule });
    return failOutcome(ERROR_CODES.POLICY_DENIED, entry.denied);
  }
  if (entry.ask !== 'none') return askApproval(ctx);
  if (ctx.observed) core.emit({ type: 'policy', callId: call.callId, tool: name, decision: 'allowed', approval: 'none' });
  return undefined;
}

/** Asks the approval hook about the call as it will really run (canonical input, summary), raced against the deadline. */
async function askApproval(ctx: CallContext): Promise<StageResult> {
  const { core, entry, call, name } = ctx;
  const ask = entry.ask as 'policy' | 'contract';
  const approval = await approvalOf(ctx, ask);
  if (approval === INTERRUPTED) return call.interruption();
  if (approval !== true) {
    if (ctx.observed)
      core.emit({ type: 'policy', callId: call.callId, tool: name, decision: 'refused', approval: ask, rule: entry.askRule });
    const why = ask === 'policy' ? `[runtime.policy] ask = "${entry.askRule}"` : `its contract says approval = "ask"`;
    return failOutcome(ERROR_CODES.APPROVAL_DENIED, `${name} needs approval (${why}) and was not approved: ${approval.refusal}`);
  }
  if (ctx.observed)
    core.emit({ type: 'policy', callId: call.callId, tool: name, decision: 'approved', approval: ask, rule: entry.askRule });
  return undefined;
}

/** True when approved; else why not in words. A hook that throws or rejects counts as no. */
async function approvalOf(ctx: CallContext, ask: 'policy' | 'contract'): Promise<true | Interrupted | { refusal: string }> {
  const { core, call, name } = ctx;
  const approve = core.approve;
  if (approve === undefined) {
    return {
      refusal: 'this host has no way to ask (no TTY or approval hook); run it from a terminal, or remove it from [runtime.policy] ask',
    };
  }
  const request: ApprovalRequest = {
    callId: call.callId,
    tool: name,
    plugin: ctx.descriptor.plugin,
    input: call.input,
    summary: ctx.summary,
    reason: ask,
    rule: ctx.entry.askRule,
    contract: ctx.descriptor.contract,
    signal: call.signal,
  };
  try {
    call.awaitingApproval = true;
    const answer = await call.race(Promise.resolve().then(() => approve(request)));
    call.awaitingApproval = false;
    if (answer === INTERRUPTED) return INTERRUPTED;
    if (typeof answer === 'object' && answer !== null && typeof answer.refused === 'string') return { refusal: answer.refused };
    return answer === true ? true : { refusal: 'the approver said no' };
  } catch (error) {
    core.logger.warn(`the approval hook failed for ${name}; the call is refused`, {
      callId: call.callId,
      error: error instanceof Error ? error.message : String(error),
    });
    return { refusal: 'the approval hook failed' };
  }
}
