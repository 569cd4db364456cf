import { definePlugin } from '@trellis/sdk';
import { echoTool } from './echoTool.ts';
import { explainPluginTool } from './explainPluginTool.ts';
import { listPluginsTool } from './listPluginsTool.ts';
import { nowTool } from './nowTool.ts';
import { searchToolsTool } from './searchToolsTool.ts';

/** The builtin-tools plugin: clock, echo, catalog search and plugin introspection. Required; no settings. */
export const plugin = definePlugin({
  manifest: { id: 'builtin-tools' },
  tools: [nowTool, echoTool, searchToolsTool, listPluginsTool, explainPluginTool],
});

export { nowTool, NowInputSchema } from './nowTool.ts';
export { formatInTimeZone } from './run/now.ts';
export type { NowOutput } from './run/now.ts';
export { echoTool, EchoInputSchema } from './echoTool.ts';
export { searchToolsTool, SearchToolsInputSchema } from './searchToolsTool.ts';
export type { SearchToolsOutput } from './run/searchTools.ts';
export { listPluginsTool, ListPluginsInputSchema, PLUGIN_STATES } from './listPluginsTool.ts';
export type { ListPluginsOutput, PluginRow } from './run/listPlugins.ts';
export { explainPluginTool, ExplainPluginInputSchema } from './explainPluginTool.ts';
export type { ExplainPluginOutput } from './run/explainPlugin.ts';
