import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const root = dirname(fileURLToPath(import.meta.url));

/** Maps every workspace package name to its `src/index.ts`, so unit tests never need a build. */
function workspaceAliases(): Record<string, string> {
  const aliases: Record<string, string> = {};
  for (const group of ['packages', 'plugins', 'apps']) {
    const dir = join(root, group);
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir)) {
      const manifest = join(dir, name, 'package.json');
      const entry = join(dir, name, 'src', 'index.ts');
      if (!existsSync(manifest) || !existsSync(entry)) continue;
      const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { name: string };
      aliases[pkg.name] = entry;
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
    reporters: ['default', ['json', { outputFile: '.vitest-report.json' }]],
  },
});
