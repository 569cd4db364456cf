// Writes a CommonJS twin (`*.cjs`) of every module tsup put in dist/, and the `trellis` binary runs
// the twin. Why: Node starts a CommonJS main module without its ESM loader, and on this project the
// loader's resolve/link/evaluate work was most of what separated `trellis tools list` from a bare
// `node -e ""` (docs/architecture.md, "Startup"). The twins keep tsup's chunking, so plugins and
// heavy libraries are still files of their own, required on first use; only the module format
// changes. esbuild cannot split CommonJS output itself, hence this pass over the split ESM output.
//
// The embedding API stays ESM (`dist/index.js`), and worker threads keep importing the ESM plugin
// modules by URL, so one process never holds two copies of a module.
import { chmodSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { transformSync } from 'esbuild';
import { ESM_REQUIRE_BANNER } from './esmRequireBanner.ts';

const dist = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist');

const IMPORT_META_URL = '__trellisImportMetaUrl';

function modulesIn(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return modulesIn(path);
    return entry.isFile() && entry.name.endsWith('.js') ? [path] : [];
  });
}

const problems: string[] = [];
let written = 0;
for (const file of modulesIn(dist)) {
  const name = relative(dist, file);
  let source = readFileSync(file, 'utf8');
  const hashbang = source.startsWith('#!') ? source.slice(0, source.indexOf('\n') + 1) : '';
  source = source
    .slice(hashbang.length)
    .replace(`${ESM_REQUIRE_BANNER}\n`, '')
    .replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n');
  let code: string;
  try {
    code = transformSync(source, {
      loader: 'js',
      format: 'cjs',
      platform: 'node',
      target: 'node20',
      // `import()` of a sibling chunk becomes a require() of its twin, so the process stays CommonJS.
      supported: { 'dynamic-import': false },
      define: { 'import.meta.url': IMPORT_META_URL },
      minifyWhitespace: true,
      minifySyntax: true,
      logLevel: 'silent',
    }).code;
  } catch (error) {
    problems.push(`${name}: ${error instanceof Error ? error.message : String(error)}`);
    continue;
  }
  // Every relative module specifier names a file of this build; point it at the twin.
  code = code.replace(/require\("(\.{1,2}\/[^"]+)\.js"\)/g, 'require("$1.cjs")');
  if (code.includes(IMPORT_META_URL)) code = `var ${IMPORT_META_URL}=require("node:url").pathToFileURL(__filename).href;\n${code}`;
  if (/\bimport\.meta\b|\bimport\(/.test(code.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`(?:[^`\\]|\\.)*`/g, '""'))) {
    problems.push(`${name}: still uses import() or import.meta after the CommonJS transform`);
  }
  const target = file.replace(/\.js$/, '.cjs');
  writeFileSync(target, hashbang + code);
  if (hashbang !== '') chmodSync(target, 0o755);
  written++;
}
if (problems.length > 0) {
  process.stderr.write(`emitCommonJsCli: ${problems.length} module(s) could not be converted:\n  ${problems.join('\n  ')}\n`);
  process.exit(1);
}
process.stdout.write(`emitCommonJsCli: wrote ${written} CommonJS modules next to their ESM originals in dist/\n`);
