import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { expect, it } from 'vitest';
import { CLI } from './cliHarness.ts';

// The built app keeps zod's English messages only (tsup.config.ts, zodEnglishOnly): its other ~50
// locales were a third of the code parsed whenever zod first loads.
it('the bundle carries zod with its English messages and none of its other locales', () => {
  const dist = join(CLI, '..');
  const texts = readdirSync(dist)
    .filter((name) => name.endsWith('.js'))
    .map((name) => readFileSync(join(dist, name), 'utf8'));
  expect(texts.some((text) => text.includes('ZodError'))).toBe(true);
  expect(texts.some((text) => text.includes('Invalid input'))).toBe(true);
  // Dutch, one of the locales left out (an ASCII phrase: esbuild escapes other characters).
  expect(texts.filter((text) => text.includes('Ongeldige invoer')).length).toBe(0);
});

/** The files a built module imports statically, transitively: `import … from "./x.js"` and `import "./x.js"`. */
function staticImportGraph(entry: string): string[] {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(/(?:\bfrom\s*|\bimport\s*)["'](\.{1,2}\/[^"']+)["']/g)) visit(join(dirname(file), match[1]!));
  };
  visit(entry);
  return [...seen];
}

// builtin-tools has a code entry (src/code.ts, definePluginCode): its first call loads the tools'
// code and neither their zod schemas nor zod (decision 0018), so a first call costs no 30 ms load.
it('the chunk a first builtin-tools call loads reaches no zod, while its definition does', () => {
  const dist = join(CLI, '..');
  // That chunk is what the generated index loads (were the index to import the package's main
  // entry, the bundle would give the definition a chunk of its own and import that instead).
  const modules = readdirSync(dist)
    .filter((name) => name.endsWith('.js'))
    .map((name) => readFileSync(join(dist, name), 'utf8'));
  expect(modules.filter((text) => text.includes('import("./plugins/builtin-tools.js")')).length).toBe(1);
  const reached = staticImportGraph(join(dist, 'plugins', 'builtin-tools.js'));
  expect(reached.length).toBeGreaterThan(1);
  expect(reached.filter((file) => readFileSync(file, 'utf8').includes('ZodError'))).toEqual([]);
  // core-fs has no code entry: its chunk is its definition, schemas and zod included.
  const fs = staticImportGraph(join(dist, 'plugins', 'core-fs.js'));
  expect(fs.filter((file) => readFileSync(file, 'utf8').includes('ZodError')).length).toBe(1);
});
