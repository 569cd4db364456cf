// Prints one closing line for the whole suite from the per-package vitest JSON reports that
// `vitest run` writes to .vitest-report.json (see vitest.shared.ts): "tests: N passed, N failed".
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

let passed = 0;
let failed = 0;
let skipped = 0;
let files = 0;
for (const group of ['packages', 'plugins', 'apps']) {
  if (!existsSync(group)) continue;
  for (const name of readdirSync(group)) {
    const dir = join(group, name);
    if (!existsSync(dir)) continue;
    // .vitest-report.json, plus .vitest-report.node<major>.json from runs on other Node versions.
    for (const file of readdirSync(dir).filter((f) => /^\.vitest-report(\.node\d+)?\.json$/.test(f))) {
      const data = JSON.parse(readFileSync(join(dir, file), 'utf8'));
      files += 1;
      passed += data.numPassedTests ?? 0;
      failed += data.numFailedTests ?? 0;
      skipped += (data.numPendingTests ?? 0) + (data.numTodoTests ?? 0);
    }
  }
}
console.log(`\nSuite: ${files} test reports`);
console.log(`tests: ${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`);
process.exit(failed > 0 ? 1 : 0);
