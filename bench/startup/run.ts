// bench/startup: wall time of `trellis tools list --json` against `node -e ""`, interleaved in
// one run so machine noise hits both alike. Target: median ratio ≤ 2×. Peak RSS reported.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const cli = join(process.cwd(), 'apps/trellis/dist/cli.cjs');
if (!existsSync(cli)) {
  process.stderr.write('build first: npx -y pnpm@10 build (pnpm bench does it)\n');
  process.exit(2);
}
const runs = Number(process.env.BENCH_RUNS ?? 30);
const home = mkdtempSync(join(tmpdir(), 'trellis-bench-startup-'));
const env = { PATH: process.env.PATH ?? '', HOME: home, XDG_CONFIG_HOME: join(home, '.config') };
const hasTime = existsSync('/usr/bin/time');

function timeRun(args: string[]): { ms: number; rssKb: number | null } {
  const started = performance.now();
  const result = hasTime
    ? spawnSync('/usr/bin/time', ['-f', '%M', process.execPath, ...args], { cwd: home, env, encoding: 'utf8' })
    : spawnSync(process.execPath, args, { cwd: home, env, encoding: 'utf8' });
  const ms = performance.now() - started;
  if (result.status !== 0) throw new Error(`node ${args.join(' ')} failed: ${result.stderr}`);
  const rssKb = hasTime ? Number(result.stderr.trim().split('\n').at(-1)) : null;
  return { ms, rssKb };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

// Warm the file cache for both.
timeRun(['-e', '']);
timeRun([cli, 'tools', 'list', '--json']);
const floor: number[] = [];
const trellis: number[] = [];
const rss: number[] = [];
for (let i = 0; i < runs; i++) {
  floor.push(timeRun(['-e', '']).ms);
  const t = timeRun([cli, 'tools', 'list', '--json']);
  trellis.push(t.ms);
  if (t.rssKb !== null) rss.push(t.rssKb);
}
rmSync(home, { recursive: true, force: true });

const floorMs = median(floor);
const trellisMs = median(trellis);
const ratio = trellisMs / floorMs;
const peakRssMb = rss.length ? Math.max(...rss) / 1024 : null;
process.stderr.write(
  `node -e "": median ${floorMs.toFixed(1)} ms\ntrellis tools list --json: median ${trellisMs.toFixed(1)} ms (${ratio.toFixed(2)}×), peak RSS ${peakRssMb?.toFixed(1) ?? 'n/a'} MB, ${runs} interleaved runs\n`,
);
process.stdout.write(
  `BENCH ${JSON.stringify({
    name: 'startup',
    runs,
    node_e_median_ms: +floorMs.toFixed(2),
    tools_list_median_ms: +trellisMs.toFixed(2),
    ratio: +ratio.toFixed(3),
    peak_rss_mb: peakRssMb === null ? null : +peakRssMb.toFixed(1),
    target: 'tools list --json median <= 2x node -e ""',
    pass: ratio <= 2,
  })}\n`,
);
