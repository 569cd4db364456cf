// bench/coldburst: 10,000 concurrent first calls to `builtin-tools.echo` through the built
// `assemble()` (apps/trellis/dist: `pnpm bench` builds it), against the same burst once warm, in
// one fresh process per sample (child.mjs), so ajv, the validator cache and the plugin's chunk
// are all loaded by the burst itself, as right after a host starts. Target: cold ≤ 2× warm (median of the
// per-process ratios). The runtime must build each lazily loaded thing once for the whole burst.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const BURST = 10_000;
const SAMPLES = 5;
const CHILD = join(dirname(fileURLToPath(import.meta.url)), 'child.mjs');
const log = (text: string) => process.stderr.write(`${text}\n`);

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

{
  const samples: Array<{ coldMs: number; warmMs: number; coldRssMb: number }> = [];
  for (let i = 0; i < SAMPLES; i += 1) {
    const run = spawnSync(process.execPath, [CHILD, String(BURST)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
    if (run.status !== 0) throw new Error(`sample ${i + 1} failed`);
    const sample = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as { coldMs: number; warmMs: number; coldRssMb: number };
    samples.push(sample);
    log(
      `sample ${i + 1}/${SAMPLES}: cold ${sample.coldMs.toFixed(0)} ms, warm ${sample.warmMs.toFixed(0)} ms (${(sample.coldMs / sample.warmMs).toFixed(2)}×), RSS after cold ${sample.coldRssMb.toFixed(0)} MB`,
    );
  }
  const ratio = median(samples.map((s) => s.coldMs / s.warmMs));
  const round3 = (n: number) => Math.round(n * 1000) / 1000;
  const result = {
    name: 'coldburst',
    burst: BURST,
    cold_median_ms: round3(median(samples.map((s) => s.coldMs))),
    warm_median_ms: round3(median(samples.map((s) => s.warmMs))),
    rss_after_cold_mb: round3(median(samples.map((s) => s.coldRssMb))),
    ratio: round3(ratio),
    target: `${BURST} concurrent first calls finish within 2x the same burst warm (median of per-process ratios)`,
    pass: ratio <= 2,
  };
  process.stdout.write(`BENCH ${JSON.stringify(result)}\n`);
}
