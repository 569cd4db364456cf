import { z } from 'zod';
import { defineTool } from '@trellis/sdk';
import { searchTools } from './run/searchTools.ts';

/** Input of `builtin-tools.search_tools`. */
export const SearchToolsInputSchema = z
  .object({
    query: z.string().min(1).max(200).describe('Words describing what you want to do, e.g. "read a csv file" or "fetch web page".'),
    limit: z.number().int().min(1).max(50).optional().describe('Most hits to return, 1–50. Default 10.'),
  })
  .strict();

/** What `search_tools` receives, checked against `SearchToolsInputSchema`. */
export type SearchToolsInput = z.infer<typeof SearchToolsInputSchema>;

/** `builtin-tools.search_tools`: ranked search over the tools the host offers. */
export const searchToolsTool = defineTool({
  name: 'search_tools',
  description:
    'Searches the tools currently offered by name, description and tags and returns the best matches, ranked (name, plugin, description, score). Use it when you are not sure which tool does something. Tools of disabled or unavailable plugins are not offered; if nothing fits, call builtin-tools.list_plugins to see why.',
  input: SearchToolsInputSchema,
  tags: ['catalog', 'search', 'introspection'],
  examples: [{ description: 'Find a tool that reads files', input: { query: 'read file', limit: 5 } }],
  run: searchTools,
});
