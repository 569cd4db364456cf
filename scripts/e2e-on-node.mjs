// Runs the app's end-to-end tests (the built `trellis` binary, spawned as users run it) on another
// Node major, fetched from the npm registry: `node scripts/e2e-on-node.mjs 24`. Needs a build.
// The JSON report goes next to the app's own (.vitest-report.node<major>.json), so the suite's
// closing line counts these tests too.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodeRelease } from './node-release.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const major = process.argv[2] ?? '24';
const app = join(root, 'apps', 'trellis');
if (!existsSync(join(app, 'dist', 'cli.cjs'))) {
  console.error('e2e-on-node: apps/trellis/dist/cli.cjs is missing; build first (npx -y pnpm@10 build)');
  process.exit(2);
}
const node = nodeRelease(major);
const version = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
console.log(`e2e-on-node: the built CLI's end-to-end tests on Node ${version}`);
// The tests spawn the CLI with process.execPath, so running vitest on this Node runs the CLI on it.
const vitest = join(root, 'node_modules', 'vitest', 'vitest.mjs');
// liveHostExits: a live `serve` reloading, so its plugins start through the spawn helper, which
// leans on how this Node hands stdio sockets over IPC (decision 0016).
const files = ['test/cli.e2e.test.ts', 'test/externalPlugins.e2e.test.ts', 'test/embedding.e2e.test.ts', 'test/liveHostExits.e2e.test.ts'];
const result = spawnSync(node, [vitest, 'run', ...files], {
  cwd: app,
  stdio: 'inherit',
  env: { ...process.env, TRELLIS_TEST_REPORT: `.vitest-report.node${major}.json` },
});
process.exit(result.status ?? 1);
