import type { ToolOutcome } from '@trellis/sdk';

/**
 * Marks a failure as one where the plugin never received the call (it could not be started,
 * the connection was refused), so the runtime may retry even a tool with side effects.
 */
export function notDispatched(outcome: ToolOutcome): ToolOutcome {
  return outcome.ok ? outcome : Object.assign({}, outcome, { notDispatched: true as const });
}
