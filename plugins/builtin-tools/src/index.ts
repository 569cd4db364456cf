import { definePlugin } from '@trellis/sdk';

/** The builtin-tools plugin. Its tools arrive in a later change; until then the snapshot reports NO_TOOLS. */
export const plugin = definePlugin({
  manifest: { id: 'builtin-tools' },
  tools: [],
});
