// The code of builtin-tools, as the host loads it on the plugin's first call: the same run
// functions as the definition in index.ts, and none of the tools' zod schemas. The build embeds
// those as JSON Schema and checks that this list matches the definition.
import { definePluginCode } from '@trellis/sdk';
import { echo } from './run/echo.ts';
import { explainPlugin } from './run/explainPlugin.ts';
import { listPlugins } from './run/listPlugins.ts';
import { now } from './run/now.ts';
import { searchTools } from './run/searchTools.ts';

export const plugin = definePluginCode({
  tools: [
    { name: 'now', run: now },
    { name: 'echo', run: echo },
    { name: 'search_tools', run: searchTools },
    { name: 'list_plugins', run: listPlugins },
    { name: 'explain_plugin', run: explainPlugin },
  ],
});
