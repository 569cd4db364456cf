import type { Options } from 'tsup';

/**
 * The one tsup configuration every package spreads. Workspace packages resolve to their
 * TypeScript source through the `@trellis/source` export condition, so nothing needs to be
 * built before it can be bundled.
 */
export const sharedTsup: Options = {
  format: ['esm'],
  target: 'node20',
  platform: 'node',
  sourcemap: true,
  clean: true,
  splitting: true,
  treeshake: true,
  esbuildOptions(options) {
    options.conditions = ['@trellis/source', 'module', 'import', 'default'];
  },
};
