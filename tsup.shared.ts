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
  // esbuild tree-shakes while bundling; tsup's extra Rollup pass would hoist lazily loaded chunks into
  // the entry's static imports, which defeats loading plugins and heavy libraries on demand.
  treeshake: false,
  esbuildOptions(options) {
    options.conditions = ['@trellis/source', 'module', 'import', 'default'];
  },
};
