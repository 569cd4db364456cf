import { ERROR_CODES, ToolError, type ToolContext } from '@trellis/sdk';
import { closestNames } from '@trellis/sdk/internal';
import type { ExplainPluginInput } from '../explainPluginTool.ts';

/** Output of `builtin-tools.explain_plugin`. */
export interface ExplainPluginOutput {
  readonly id: string;
  /** What the host reports: every candidate with this id across discovery roots, reasons and the decision trace. */
  readonly explanation: unknown;
}

/** True when the host's answer holds nothing (it knows no plugin with that id). */
function isEmptyExplanation(value: unknown): boolean {
  if (value === null || value === undefined) return true;
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value === 'object') {
    const candidates = (value as { candidates?: unknown }).candidates;
    if (Array.isArray(candidates)) return candidates.length === 0;
    return Object.keys(value).length === 0;
  }
  return false;
}

/** `builtin-tools.explain_plugin`: everything the host knows about why one plugin is in its state. */
export function explainPlugin(input: ExplainPluginInput, ctx: ToolContext): ExplainPluginOutput {
  const explanation = ctx.host.explainPlugin(input.id);
  if (!isEmptyExplanation(explanation)) return { id: input.id, explanation };
  const ids = [...new Set(ctx.host.plugins().map((p) => p.id))];
  // The registry may suggest ids itself (`{ candidates: [], suggestions }`); add the nearest known ids.
  const offered = (explanation as { suggestions?: unknown } | null | undefined)?.suggestions;
  const fromHost = Array.isArray(offered) ? offered.filter((s): s is string => typeof s === 'string') : [];
  const nearest = closestNames(input.id, ids);
  const near = [...new Set([...fromHost, ...nearest])].slice(0, 3).map((id) => `"${id}"`);
  const suggestion = near.length > 0 ? ` Did you mean ${near.join(' or ')}?` : '';
  throw new ToolError(
    ERROR_CODES.NOT_FOUND,
    `id: no plugin "${input.id}" was found in any discovery root.${suggestion} Call builtin-tools.list_plugins to see every id the host knows.`,
  );
}
