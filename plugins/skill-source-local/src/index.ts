import { definePlugin } from '@trellis/sdk';

/** The skill-source-local plugin. Its tools arrive in a later change; until then the snapshot reports NO_TOOLS. */
export const plugin = definePlugin({
  manifest: { id: 'skill-source-local' },
  tools: [],
});
