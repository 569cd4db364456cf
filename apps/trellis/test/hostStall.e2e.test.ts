import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createSandbox, runCli, type Sandbox } from './cliHarness.ts';

let sandbox: Sandbox;
beforeEach(() => {
  sandbox = createSandbox();
});
afterEach(() => sandbox.cleanup());

it('a 400 000-deep <div> page and 200 000-deep JSON run off the host thread: the timer keeps ticking, the fetch ends TIMEOUT at its deadline', () => {
  const deep = 200_000;
  writeFileSync(join(sandbox.workspace, 'deep.json'), `[{"a":${'['.repeat(deep)}${']'.repeat(deep)}}]`);
  const config = join(sandbox.dir, 'runtime.toml');
  writeFileSync(config, '[runtime]\ntool_timeout_seconds = 4\n\n[runtime.tools.web]\nprivate_hosts = ["127.0.0.1"]\n');
  const script = join(import.meta.dirname, 'fixtures', 'stallHost.mjs');
  const run = spawnSync(process.execPath, [script, sandbox.workspace, config], {
    cwd: sandbox.workspace,
    env: sandbox.env,
    encoding: 'utf8',
    timeout: 120_000,
  });
  expect(run.stderr).toBe('');
  const results = JSON.parse(run.stdout) as Record<
    string,
    { outcome: { ok: boolean; code?: string; message?: string }; ms: number; ticks: number; longestGapMs: number }
  >;
  // Before: the page was converted on the host thread for 88 s, not one tick in between.
  expect(results.fetch!.outcome).toEqual({
    ok: false,
    code: 'TIMEOUT',
    message: 'core-web.fetch did not finish within its 4000 ms deadline and was abandoned',
  });
  expect(results.fetch!.ms).toBeLessThan(4000 + 10_000);
  // A 20 ms timer over a 4 s call: dozens of ticks, and never a gap of seconds.
  expect(results.fetch!.ticks).toBeGreaterThanOrEqual(20);
  expect(results.fetch!.longestGapMs).toBeLessThan(3000);
  // Before: TOOL_THREW, a stack overflow.
  expect(results.deepJson!.outcome).toEqual({
    ok: false,
    code: 'INVALID_ARGUMENT',
    message: `path: "deep.json": element 0 of the array nests objects or arrays more than 100 levels deep, core-table's depth limit for JSON rows; flatten the data or extract the part you need into its own file.`,
  });
  expect(results.echoAfter!.outcome).toEqual({ ok: true });
});

it('tools describe says where each heavy bundled tool runs', () => {
  const runsIn = (name: string) =>
    runCli(sandbox, ['tools', 'describe', name])
      .stdout.split('\n')
      .find((line) => line.startsWith('  runs in: '));
  expect(
    ['core-web.fetch', 'core-table.describe', 'core-table.query', 'core-table.read', 'core-fs.search', 'core-fs.glob'].map(runsIn),
  ).toEqual(Array(6).fill('  runs in: a worker thread of the tool pool, terminated at the deadline (the host thread stays free)'));
  expect(runsIn('builtin-tools.echo')).toBe('  runs in: the host thread (cheap, bounded work only)');
});
