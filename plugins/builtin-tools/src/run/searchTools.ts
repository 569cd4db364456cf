import type { HostToolHit, ToolContext } from '@trellis/sdk';
import type { SearchToolsInput } from '../searchToolsTool.ts';

/** Output of `builtin-tools.search_tools`. */
export interface SearchToolsOutput {
  readonly query: string;
  readonly hits: readonly HostToolHit[];
  /** Present when nothing matched: what to try next. */
  readonly hint?: string;
}

/** `builtin-tools.search_tools`: the offered tools that best match `input.query`, ranked. */
export function searchTools(input: SearchToolsInput, ctx: ToolContext): SearchToolsOutput {
  const limit = input.limit ?? 10;
  const hits = ctx.host.searchTools(input.query, { limit }).slice(0, limit);
  if (hits.length > 0) return { query: input.query, hits };
  return {
    query: input.query,
    hits,
    hint: 'No offered tool matched. Try other words, or call builtin-tools.list_plugins to see plugins that are disabled, unavailable or rejected and why.',
  };
}
