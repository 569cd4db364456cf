import { z } from 'zod';
import { defineTool } from '@trellis/sdk';
import type { HostToolHit } from '@trellis/sdk';

/** Input of `builtin-tools.search_tools`. */
export const SearchToolsInputSchema = z
  .object({
    query: z.string().min(1).max(200).describe('Words describing what you want to do, e.g. "read a csv file" or "fetch web page".'),
    limit: z.number().int().min(1).max(50).optional().describe('Most hits to return, 1–50. Default 10.'),
  })
  .strict();

/** Output of `builtin-tools.search_tools`. */
export interface SearchToolsOutput {
  readonly query: string;
  readonly hits: readonly HostToolHit[];
  /** Present when nothing matched: what to try next. */
  readonly hint?: string;
}

/** `builtin-tools.search_tools`: ranked search over the tools the host offers. */
export const searchToolsTool = defineTool({
  name: 'search_tools',
  description:
    'Searches the tools currently offered by name, description and tags and returns the best matches, ranked (name, plugin, description, score). Use it when you are not sure which tool does something. Tools of disabled or unavailable plugins are not offered; if nothing fits, call builtin-tools.list_plugins to see why.',
  input: SearchToolsInputSchema,
  tags: ['catalog', 'search', 'introspection'],
  examples: [{ description: 'Find a tool that reads files', input: { query: 'read file', limit: 5 } }],
  run(input, ctx): SearchToolsOutput {
    const limit = input.limit ?? 10;
    const hits = ctx.host.searchTools(input.query, { limit }).slice(0, limit);
    if (hits.length > 0) return { query: input.query, hits };
    return {
      query: input.query,
      hits,
      hint: 'No offered tool matched. Try other words, or call builtin-tools.list_plugins to see plugins that are disabled, unavailable or rejected and why.',
    };
  },
});
