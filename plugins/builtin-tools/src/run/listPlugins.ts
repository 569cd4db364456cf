import type { ToolContext } from '@trellis/sdk';
import type { ListPluginsInput } from '../listPluginsTool.ts';

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

/** `builtin-tools.list_plugins`: every plugin the host found, with its state and the reason for it. */
export function listPlugins(input: ListPluginsInput, ctx: ToolContext): ListPluginsOutput {
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
}
