import { z } from 'zod';
import { PLUGIN_ID_PATTERN, defineTool } from '@trellis/sdk';
import { explainPlugin } from './run/explainPlugin.ts';

/** Input of `builtin-tools.explain_plugin`. */
export const ExplainPluginInputSchema = z
  .object({
    id: z
      .string()
      .min(1)
      .max(64)
      .regex(PLUGIN_ID_PATTERN)
      .describe('The plugin id, e.g. "core-fs": lowercase letters, digits and dashes, as builtin-tools.list_plugins shows it.'),
  })
  .strict();

/** What `explain_plugin` receives, checked against `ExplainPluginInputSchema`. */
export type ExplainPluginInput = z.infer<typeof ExplainPluginInputSchema>;

/** `builtin-tools.explain_plugin`: why one plugin is in its state. */
export const explainPluginTool = defineTool({
  name: 'explain_plugin',
  description:
    'Explains one plugin in full: every copy the host found under that id (bundled or on disk), which one won, its state and every reason and warning, and how the decision was reached. Use it after builtin-tools.list_plugins when you need to tell the user exactly how to enable or fix a plugin.',
  input: ExplainPluginInputSchema,
  tags: ['plugins', 'introspection', 'diagnostics'],
  examples: [{ description: 'Why is core-python off?', input: { id: 'core-python' } }],
  run: explainPlugin,
});
