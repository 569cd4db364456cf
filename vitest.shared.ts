import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const root = dirname(fileURLToPath(import.meta.url));

/**
 * Maps every workspace package entry (`@trellis/sdk`, `@trellis/sdk/schema`, …) to its TypeScript
 * source, read from each package's `exports[...]["@trellis/source"]`, so unit tests never need a
 * build. Exact matches only, so a subpath never falls through to the main entry.
 */
function workspaceAliases(): Array<{ find: RegExp; replacement: string }> {
  const aliases: Array<{ find: RegExp; replacement: string }> = [];
  for (const group of ['packages', 'plugins', 'apps']) {
    const dir = join(root, group);
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir)) {
      const manifest = join(dir, name, 'package.json');
      if (!existsSync(manifest)) continue;
      const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { name: string; exports?: Record<string, unknown> };
      for (const [subpath, target] of Object.entries(pkg.exports ?? {})) {
        const source = typeof target === 'object' && target !== null ? (target as Record<string, string>)['@trellis/source'] : undefined;
        if (source === undefined) continue;
        const specifier = subpath === '.' ? pkg.name : `${pkg.name}/${subpath.replace(/^\.\//, '')}`;
        const escaped = specifier.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
        aliases.push({ find: new RegExp(`^${escaped}$`), replacement: join(dir, name, source) });
      }
    }
  }
  return aliases;
}

/** The shared vitest configuration; a package's `vitest.config.ts` is `export default sharedVitest`. */
export const sharedVitest = defineConfig({
  resolve: { alias: workspaceAliases() },
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // The JSON report feeds scripts/summarize-tests.mjs, which prints the suite's closing line.
    // TRELLIS_TEST_REPORT names another report file (scripts/e2e-on-node.mjs keeps one per Node major).
    reporters: ['default', ['json', { outputFile: process.env.TRELLIS_TEST_REPORT ?? '.vitest-report.json' }]],
  },
});
