// Runs the benchmarks: `pnpm bench` runs every bench/<name>/run.ts, `pnpm bench <name> …` the
// named ones. Each benchmark prints progress on stderr and, last, one machine-readable line on
// stdout: `BENCH {"name": …, "median_ms": …, "ratio": …, "target": …, "pass": true|false}`.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const wanted = process.argv.slice(2);
const names = readdirSync(here, { withFileTypes: true })
  .filter((d) => d.isDirectory() && existsSync(join(here, d.name, 'run.ts')))
  .map((d) => d.name)
  .filter((name) => wanted.length === 0 || wanted.includes(name))
  .sort();
if (names.length === 0) {
  console.error(`no benchmark matches ${wanted.join(', ')}`);
  process.exit(2);
}
let failed = 0;
for (const name of names) {
  console.error(`\n== bench/${name}`);
  const run = spawnSync(process.execPath, ['--conditions=@trellis/source', '--import', 'tsx', '--expose-gc', join(here, name, 'run.ts')], {
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
    cwd: join(here, '..'),
  });
  process.stdout.write(run.stdout);
  if (run.status !== 0) failed += 1;
}
process.exit(failed === 0 ? 0 : 1);
