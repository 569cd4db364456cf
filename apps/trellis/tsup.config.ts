import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { defineConfig, type Options } from 'tsup';
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

/**
 * zod re-exports every one of its ~50 message locales as `z.locales` (about 260 KB of the 450 KB
 * it adds to the bundle, all parsed when zod first loads: a config file read, a manifest parsed, a
 * bundled tool's first call). Trellis speaks English only, zod's default, so the bundle keeps `en`:
 * the way moment.js locales are left out of web bundles. `z.locales.en` still works; any other
 * locale is undefined.
 */
const zodEnglishOnly: NonNullable<Options['esbuildPlugins']>[number] = {
  name: 'zod-english-only',
  setup(build) {
    build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]zod[\\/]v4[\\/](core|classic)[\\/]/.test(args.importer)
        ? { path: join(dirname(args.importer), '..', 'locales', 'en.js'), namespace: 'zod-english-only' }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'zod-english-only' }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(args.path)};`,
      resolveDir: dirname(args.path),
      loader: 'js',
    }));
  },
};

export default defineConfig({
  ...sharedTsup,
  entry: { cli: 'src/cli.ts', index: 'src/index.ts', 'mcp-server': 'src/mcpServer.ts', ...pluginEntries, 'entry/worker': tinypoolEntry },
  // Self-contained: workspace packages and third-party code are bundled; nothing resolves at run time.
  noExternal: [/.*/],
  // Bundled CommonJS dependencies call require() for Node built-ins.
  banner: { js: ESM_REQUIRE_BANNER },
  esbuildPlugins: [zodEnglishOnly],
  // Smaller code compiles faster at startup; the source maps keep stack traces readable.
  minify: true,
  shims: false,
  // Types of the embedding API (`assemble()` and what it returns), complete once installed: the
  // unpublished workspace packages' types are inlined; `@trellis/sdk`, a dependency, stays external
  // (tsup leaves `dependencies` external in the types). test/install.e2e.test.ts compiles against them.
  dts: { entry: { index: 'src/index.ts' }, compilerOptions: { paths: unpublishedSourcePaths() } },
});
