// bench/discovery: the registry's full discover → admit → decide → snapshot over 10,000 external
// manifests in the four file roots plus the 10 bundled plugins, against a floor measured in the
// same run: a plain synchronous walk + realpath + lstat + read + TOML parse of the same files,
// with no checks. Also the realistic case (10 bundled + 20 external) and, with
// BENCH_DISCOVERY_100K=1, 100,000 manifests for the scaling target.
//
// Timing: full and floor alternate run by run (after 2 warm-ups), so both see the same cache and
// machine load; `ratio` is median(full) / median(floor), and `ratio_paired` the median of the
// per-run full/floor ratios, which a load swing between runs moves less.
// Peak RSS: measured in a fresh child process (rssChild.ts) that loads the registry and runs the
// pipeline once over the same 10k tree — what a host does at startup — and reports its own
// getrusage maxrss. The child is rssChild.ts bundled by esbuild into one plain ESM file, as the
// app's build bundles the registry, and run by plain `node`: under tsx the child also carried
// tsx's loader thread (~50 MB that no host has). So the figure is the pipeline's plus Node's
// baseline (reported as rss_child_baseline_mb), not this process's, which also holds the tree
// generator, the floor's garbage and eleven earlier runs' heap growth (logged as "bench process
// peak RSS").
//
// Run: node bench/run.mjs discovery   (BENCH_DISCOVERY_100K=1 node bench/run.mjs discovery)
import { spawnSync } from 'node:child_process';
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { parse, stringify } from 'smol-toml';
import { prepareRegistry } from '@trellis/registry';
import type { FileRootSpec } from '@trellis/registry';
import { full } from './pipeline.ts';

const here = dirname(fileURLToPath(import.meta.url));
const log = (line: string): void => {
  process.stderr.write(`${line}\n`);
};

const ROOT_KINDS = [
  ['explicit', 0],
  ['env', 1],
  ['workspace', 2],
  ['user', 3],
] as const;

/** A realistic external manifest: process runtime, two tools with schemas, some optional fields. */
function manifestFor(id: string, i: number): string {
  return stringify({
    schema_version: 1,
    id,
    name: `Plugin ${id}`,
    version: '1.2.3',
    kind: i % 7 === 0 ? 'connector' : 'toolset',
    description: 'A generated plugin used by the discovery benchmark; it declares two tools.',
    side_effects: false,
    capabilities: ['fs.read'],
    requires_env: i % 10 === 0 ? ['BENCH_TOKEN'] : [],
    ...(i % 3 === 0 ? { profile: 'minimal' } : {}),
    runtime: { type: 'process', command: 'python3', args: ['main.py', '--serve'] },
    tools: [
      { name: 'status', description: 'Show status', input_schema: { type: 'object', properties: { short: { type: 'boolean' } } } },
      {
        name: 'diff',
        description: 'Show a diff',
        input_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
      },
    ],
  });
}

/** Writes `total` manifests spread over the four roots: half one level deep, half in groups of 50. */
function makeTree(total: number): { base: string; roots: FileRootSpec[] } {
  const base = mkdtempSync(join(tmpdir(), 'trellis-bench-discovery-'));
  const roots: FileRootSpec[] = ROOT_KINDS.map(([root, priority]) => ({
    root,
    priority,
    path: join(base, root),
    origin: 'bench',
    warnIfMissing: root === 'explicit' || root === 'env',
  }));
  const per = Math.ceil(total / roots.length);
  let written = 0;
  for (const spec of roots) {
    for (let i = 0; i < per && written < total; i += 1, written += 1) {
      const id = `ext-${spec.root}-${i}`;
      const dir = i % 2 === 0 ? join(spec.path, id) : join(spec.path, `group-${Math.floor(i / 100)}`, id);
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'plugin.toml'), manifestFor(id, i));
    }
    mkdirSync(join(spec.path, 'node_modules', 'skipped'), { recursive: true });
  }
  return { base, roots };
}

const SKIP = new Set(['node_modules', '.git']);

/** The floor: a plain synchronous walk + realpath + lstat + read + TOML parse, no checks. */
function floor(roots: readonly FileRootSpec[]): number {
  let count = 0;
  const walk = (dir: string, depth: number): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (depth < 4 && !SKIP.has(entry.name) && !entry.name.endsWith('.disabled')) walk(path, depth + 1);
      } else if (entry.name === 'plugin.toml') {
        realpathSync.native(path);
        lstatSync(path);
        parse(readFileSync(path, 'utf8'));
        count += 1;
      }
    }
  };
  for (const root of roots) walk(root.path, 0);
  return count;
}

// Load the lazy dependencies (glob, manifest parser, validator) once, outside the timed runs.
await prepareRegistry();

function time(fn: () => unknown): number {
  const start = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const gc = (globalThis as { gc?: () => void }).gc;

/** Alternates full and floor runs so both see the same cache and machine load. */
function measure(
  roots: readonly FileRootSpec[],
  runs: number,
): { full: number; floor: number; pairedRatio: number; count: number; floorCount: number } {
  const fullTimes: number[] = [];
  const floorTimes: number[] = [];
  const ratios: number[] = [];
  let count = 0;
  let floorCount = 0;
  for (let i = 0; i < runs + 2; i += 1) {
    gc?.();
    const f = time(() => (count = full(roots)));
    gc?.();
    const g = time(() => (floorCount = floor(roots)));
    if (i >= 2) {
      fullTimes.push(f);
      floorTimes.push(g);
      ratios.push(f / g);
    }
    log(`  run ${i + 1}/${runs + 2}${i < 2 ? ' (warm-up)' : ''}: full ${f.toFixed(1)} ms, floor ${g.toFixed(1)} ms`);
  }
  return { full: median(fullTimes), floor: median(floorTimes), pairedRatio: median(ratios), count, floorCount };
}

/** Peak RSS of the pipeline alone, in a fresh child process over the same tree (see the header). */
async function childRss(roots: readonly FileRootSpec[]): Promise<{ baselineMb: number; peakMb: number; count: number }> {
  // Next to discovery/, so pipeline.ts finds the repository from its own URL as it does here.
  const outDir = mkdtempSync(join(here, '..', '.rss-child-'));
  try {
    const outfile = join(outDir, 'rssChild.mjs');
    await build({
      entryPoints: [join(here, 'rssChild.ts')],
      outfile,
      bundle: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      conditions: ['@trellis/source', 'module', 'import', 'default'],
      // Bundled CommonJS dependencies (fast-glob) call require() for Node built-ins.
      banner: {
        js: "import { createRequire as __benchCreateRequire } from 'node:module';\nconst require = __benchCreateRequire(import.meta.url);",
      },
      logLevel: 'error',
    });
    const child = spawnSync(process.execPath, [outfile, JSON.stringify(roots), '1'], {
      stdio: ['ignore', 'pipe', 'inherit'],
      encoding: 'utf8',
    });
    if (child.status !== 0) throw new Error(`rssChild exited with ${child.status}`);
    return JSON.parse(child.stdout.trim().split('\n').pop()!) as { baselineMb: number; peakMb: number; count: number };
  } finally {
    rmSync(outDir, { recursive: true, force: true });
  }
}

const round = (n: number): number => Math.round(n * 10) / 10;

log(`bench process RSS before any run: ${(process.memoryUsage().rss / 1048576).toFixed(0)} MB (not the figure reported: see rssChild.ts)`);
log('creating 10,000 manifests…');
const tree10k = makeTree(10_000);
let result10k: ReturnType<typeof measure>;
let rss: Awaited<ReturnType<typeof childRss>>;
try {
  log('measuring 10,000 external + 10 bundled (median of 9, after 2 warm-ups)');
  result10k = measure(tree10k.roots, 9);
  log(`bench process peak RSS after the timed runs: ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB (not the figure reported)`);
  log('peak RSS of the pipeline alone (fresh child process, one run over the same tree)…');
  rss = await childRss(tree10k.roots);
} finally {
  rmSync(tree10k.base, { recursive: true, force: true });
}
const peakRssMb = rss.peakMb;
log(
  `10k: full ${result10k.full.toFixed(1)} ms (${result10k.count} candidates), floor ${result10k.floor.toFixed(1)} ms (${result10k.floorCount} files), ` +
    `ratio ${(result10k.full / result10k.floor).toFixed(2)} (paired ${result10k.pairedRatio.toFixed(2)}); ` +
    `pipeline peak RSS ${peakRssMb.toFixed(0)} MB (child baseline ${rss.baselineMb.toFixed(0)} MB, ${rss.count} candidates)`,
);

log('realistic case: 20 external + 10 bundled (median of 51)');
const small = makeTree(20);
let realisticMs: number;
try {
  const times: number[] = [];
  for (let i = 0; i < 56; i += 1) {
    const t = time(() => full(small.roots));
    if (i >= 5) times.push(t);
  }
  realisticMs = median(times);
} finally {
  rmSync(small.base, { recursive: true, force: true });
}
log(`realistic: ${realisticMs.toFixed(2)} ms`);

let scale: { ms: number; floor: number; ratio: number } | null = null;
if (process.env.BENCH_DISCOVERY_100K === '1') {
  log('creating 100,000 manifests (BENCH_DISCOVERY_100K=1)…');
  const tree100k = makeTree(100_000);
  try {
    const r = measure(tree100k.roots, 3);
    scale = { ms: r.full, floor: r.floor, ratio: r.full / result10k.full };
    log(
      `100k: full ${r.full.toFixed(1)} ms (${r.count} candidates), floor ${r.floor.toFixed(1)} ms, ${scale.ratio.toFixed(2)}× the 10k time`,
    );
  } finally {
    rmSync(tree100k.base, { recursive: true, force: true });
  }
} else {
  log('100k case skipped; set BENCH_DISCOVERY_100K=1 to run it');
}

const ratio = result10k.full / result10k.floor;
const pass =
  ratio <= 1.3 &&
  result10k.full <= 400 &&
  peakRssMb <= 200 &&
  realisticMs <= 10 &&
  (scale === null || scale.ratio <= 11) &&
  result10k.count === 10_010 &&
  rss.count === 10_010;
process.stdout.write(
  `BENCH ${JSON.stringify({
    name: 'discovery',
    median_ms: round(result10k.full),
    floor_ms: round(result10k.floor),
    ratio: Math.round(ratio * 100) / 100,
    ratio_paired: Math.round(result10k.pairedRatio * 100) / 100,
    candidates: result10k.count,
    peak_rss_mb: Math.round(peakRssMb),
    rss_child_baseline_mb: Math.round(rss.baselineMb),
    realistic_ms: Math.round(realisticMs * 100) / 100,
    median_100k_ms: scale === null ? null : round(scale.ms),
    floor_100k_ms: scale === null ? null : round(scale.floor),
    scale_ratio_100k: scale === null ? null : Math.round(scale.ratio * 100) / 100,
    target: 'full ≤ 1.3× floor, 10k ≤ 400 ms, 100k ≤ 11× 10k (opt-in), peak RSS ≤ 200 MB at 10k, 10 bundled + 20 external ≤ 10 ms',
    pass,
  })}\n`,
);
