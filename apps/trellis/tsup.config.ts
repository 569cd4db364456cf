import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { defineConfig } from 'tsup';
import { sharedTsup } from '../../tsup.shared.ts';
import { ESM_REQUIRE_BANNER } from './scripts/esmRequireBanner.ts';

// Written by scripts/generateBundledIndex.ts: one entry per bundled plugin, so each plugin is a
// chunk of its own (`dist/plugins/<id>.js`) loaded on its first call.
const pluginEntries: Record<string, string> = existsSync('bundled-entries.gen.json')
  ? JSON.parse(readFileSync('bundled-entries.gen.json', 'utf8'))
  : {};

// tinypool (the runtime's worker pool for worker-isolated tools) starts each worker from
// `entry/worker.js` beside its own code; bundled, its code sits in dist/, so the entry goes to
// dist/entry/worker.js.
const tinypoolEntry = join(
  dirname(createRequire(join(import.meta.dirname, '../../packages/runtime/package.json')).resolve('tinypool')),
  'entry',
  'worker.js',
);

/**
 * `compilerOptions.paths` for the types build: every entry of the unpublished workspace packages
 * (`@trellis/runtime`, `@trellis/runtime/external`, …) mapped to its `@trellis/source` file. A
 * package reached through node_modules stays an import in the bundled .d.ts; one reached through
 * `paths` is compiled from source and inlined. `@trellis/sdk` is published (a dependency of this
 * package), so its imports stay as they are.
 */
function unpublishedSourcePaths(): Record<string, string[]> {
  const root = join(import.meta.dirname, '..', '..');
  const paths: Record<string, string[]> = {};
  for (const group of ['packages', 'plugins']) {
    for (const name of readdirSync(join(root, group))) {
      const manifest = join(root, group, name, 'package.json');
      if (!existsSync(manifest)) continue;
      const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { name: string; exports?: Record<string, unknown> };
      if (pkg.name === '@trellis/sdk') continue;
      for (const [subpath, target] of Object.entries(pkg.exports ?? {})) {
        const source = typeof target === 'object' && target !== null ? (target as Record<string, unknown>)['@trellis/source'] : undefined;
        if (typeof source !== 'string') continue;
        const specifier = subpath === '.' ? pkg.name : `${pkg.name}/${subpath.slice(2)}`;
        paths[specifier] = [join(root, group, name, source)];
      }
    }
  }
  return paths;
}

export default defineConfig({
  ...sharedTsup,
  entry: { cli: 'src/cli.ts', index: 'src/index.ts', 'mcp-server': 'src/mcpServer.ts', ...pluginEntries, 'entry/worker': tinypoolEntry },
  // Self-contained: workspace packages and third-party code are bundled; nothing resolves at run time.
  noExternal: [/.*/],
  // Bundled CommonJS dependencies call require() for Node built-ins.
  banner: { js: ESM_REQUIRE_BANNER },
  // Smaller code compiles faster at startup; the source maps keep stack traces readable.
  minify: true,
  shims: false,
  // Types of the embedding API (`assemble()` and what it returns), complete once installed: the
  // unpublished workspace packages' types are inlined; `@trellis/sdk`, a dependency, stays external
  // (tsup leaves `dependencies` external in the types). test/install.e2e.test.ts compiles against them.
  dts: { entry: { index: 'src/index.ts' }, compilerOptions: { paths: unpublishedSourcePaths() } },
});
