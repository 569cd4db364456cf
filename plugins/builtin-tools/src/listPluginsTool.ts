import { z } from 'zod';
import { defineTool } from '@trellis/sdk';
import { listPlugins } from './run/listPlugins.ts';

/** The states a plugin can be in, as the registry reports them. */
export const PLUGIN_STATES = ['enabled', 'disabled', 'unavailable', 'rejected', 'shadowed'] as const;

/** Input of `builtin-tools.list_plugins`. */
export const ListPluginsInputSchema = z
  .object({
    state: z.enum(PLUGIN_STATES).optional().describe('Only plugins in this state. Omit it to list every plugin the host found.'),
  })
  .strict();

/** What `list_plugins` receives, checked against `ListPluginsInputSchema`. */
export type ListPluginsInput = z.infer<typeof ListPluginsInputSchema>;

/** `builtin-tools.list_plugins`: every plugin with its state and the reason for it. */
export const listPluginsTool = defineTool({
  name: 'list_plugins',
  description:
    'Lists the plugins the host found, each with its kind, state (enabled, disabled, unavailable, rejected, shadowed), where it was found and the main reason for its state. Use it when a tool you expect is missing: the reason says what is wrong and how to fix it. Call builtin-tools.explain_plugin for the full story of one plugin.',
  input: ListPluginsInputSchema,
  tags: ['plugins', 'introspection', 'diagnostics'],
  examples: [
    { description: 'All plugins', input: {} },
    { description: 'Only plugins that are not available', input: { state: 'unavailable' } },
  ],
  run: listPlugins,
});
