// Moves imports of host helpers from `@trellis/sdk` to `@trellis/sdk/internal` (decision 0010).
// Run it after merging code written before the split: `node scripts/sdk-internal-imports.mjs`,
// then `npx prettier --write` on the files it lists. It reads the names from
// packages/sdk/src/internal.ts and rewrites `import { … } from '@trellis/sdk'` and
// `export { … } from '@trellis/sdk'` in packages/, plugins/, apps/ and bench/, splitting a
// statement that names both kinds.
import { readdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const internalSource = readFileSync(join(root, 'packages/sdk/src/internal.ts'), 'utf8').replace(/^\s*\/\/.*$/gm, '');
const INTERNAL = new Set(
  [...internalSource.matchAll(/\{([^}]*)\}/g)].flatMap((m) =>
    m[1]
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  ),
);

const files = [];
function walk(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (['node_modules', 'dist', '.turbo'].includes(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) walk(path);
    else if (/\.(ts|mts|mjs|js)$/.test(entry.name) && !entry.name.endsWith('.gen.ts')) files.push(path);
  }
}
for (const group of ['packages', 'plugins', 'apps', 'bench']) if (existsSync(join(root, group))) walk(join(root, group));

const statement = /^(import|export)(\s+type)?\s*\{([^}]*)\}\s*from\s*'@trellis\/sdk';[ \t]*$/gm;
const nameOf = (specifier) =>
  specifier
    .replace(/^type\s+/, '')
    .split(/\s+as\s+/)[0]
    .trim();
for (const file of files) {
  if (file.startsWith(join(root, 'packages/sdk/src'))) continue;
  const text = readFileSync(file, 'utf8');
  let changed = false;
  const next = text.replace(statement, (all, keyword, typeKeyword, body) => {
    const specifiers = body
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    const internal = specifiers.filter((s) => INTERNAL.has(nameOf(s)));
    if (internal.length === 0) return all;
    changed = true;
    const publicOnes = specifiers.filter((s) => !INTERNAL.has(nameOf(s)));
    const line = (list, from) => `${keyword}${typeKeyword ?? ''} { ${list.join(', ')} } from '${from}';`;
    return [...(publicOnes.length > 0 ? [line(publicOnes, '@trellis/sdk')] : []), line(internal, '@trellis/sdk/internal')].join('\n');
  });
  if (changed) {
    writeFileSync(file, next);
    console.log(file.slice(root.length + 1));
  }
}
