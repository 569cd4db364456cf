import { existsSync, readFileSync } from 'node:fs';
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
  // Types of the embedding API (`assemble()` and what it returns), with the workspace packages'
  // types inlined: the published package depends on nothing.
  dts: { entry: { index: 'src/index.ts' }, resolve: [/^@trellis\//] },
});
