import { definePlugin } from '@trellis/sdk';

/** The core-python plugin. Its tools arrive in a later change; until then the snapshot reports NO_TOOLS. */
export const plugin = definePlugin({
  manifest: { id: 'core-python' },
  tools: [],
});
