import { z } from 'zod';
import { defineTool } from '@trellis/sdk';

/** The states a plugin can be in, as the registry reports them. */
export const PLUGIN_STATES = ['enabled', 'disabled', 'unavailable', 'rejected', 'shadowed'] as const;

/** Input of `builtin-tools.list_plugins`. */
export const ListPluginsInputSchema = z
  .object({
    state: z.enum(PLUGIN_STATES).optional().describe('Only plugins in this state. Omit it to list every plugin the host found.'),
  })
  .strict();

/** One row of `builtin-tools.list_plugins`. */
export interface PluginRow {
  readonly id: string;
  readonly kind: string;
  readonly state: string;
  /** Where it was found: explicit, env, workspace, user or bundled. */
  readonly root: string;
  /** The headline reason for its state, or null when the host gave none. */
  readonly reason: { readonly code: string; readonly message: string } | null;
}

/** Output of `builtin-tools.list_plugins`. */
export interface ListPluginsOutput {
  readonly plugins: readonly PluginRow[];
  /** How many plugins are in each state, over all plugins (not only the filtered ones). */
  readonly counts: Readonly<Record<string, number>>;
}

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
  run(input, ctx): ListPluginsOutput {
    const all = ctx.host.plugins();
    const counts: Record<string, number> = {};
    for (const p of all) counts[p.state] = (counts[p.state] ?? 0) + 1;
    const plugins = all
      .filter((p) => input.state === undefined || p.state === input.state)
      .map((p) => {
        const first = p.reasons[0];
        return {
          id: p.id,
          kind: p.kind,
          state: p.state,
          root: p.source.root,
          reason: first === undefined ? null : { code: first.code, message: first.message },
        };
      });
    return { plugins, counts };
  },
});
