import { failOutcome } from '@trellis/sdk';
import type { ToolOutcome } from '@trellis/sdk';
import type { ImplementationCall } from '../PluginImplementation.ts';

/** True when the call ended because its deadline passed rather than because the caller gave up. */
export function isDeadline(call: Pick<ImplementationCall, 'signal' | 'deadlineAt'>): boolean {
  const reason: unknown = call.signal.reason;
  if (reason instanceof Error && reason.name === 'TimeoutError') return true;
  return performance.now() >= call.deadlineAt - 1;
}

/** The outcome for a call that stopped early: `TIMEOUT` at the deadline, `ABORTED` otherwise. */
export function stoppedOutcome(
  pluginId: string,
  call: Pick<ImplementationCall, 'signal' | 'deadlineAt' | 'tool'>,
  what: string,
): ToolOutcome {
  return isDeadline(call)
    ? failOutcome(
        'TIMEOUT',
        `${pluginId}.${call.tool} did not answer before its deadline (${what}); raise the tool's timeout_seconds or make it faster`,
        true,
      )
    : failOutcome('ABORTED', `${pluginId}.${call.tool} was aborted by the caller (${what})`);
}

/**
 * An AbortSignal that fires when the call's signal does or when its absolute deadline passes,
 * so an adapter honours the deadline even when the caller wired no timer. `dispose` clears it.
 */
export function callStopSignal(call: Pick<ImplementationCall, 'signal' | 'deadlineAt'>): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const onAbort = () => controller.abort(call.signal.reason);
  if (call.signal.aborted) onAbort();
  else call.signal.addEventListener('abort', onAbort);
  const remaining = call.deadlineAt - performance.now();
  const timer = Number.isFinite(remaining)
    ? setTimeout(() => controller.abort(new DOMException('deadline passed', 'TimeoutError')), Math.max(0, remaining))
    : undefined;
  timer?.unref?.();
  return {
    signal: controller.signal,
    dispose: () => {
      if (timer) clearTimeout(timer);
      call.signal.removeEventListener('abort', onAbort);
    },
  };
}
