// bench/catalog: how long createResourceCatalog takes for 1,000 tools from 100 synthetic plugins
// (50 bundled with build-time specs, 50 external with manifest [[tools]]), against a floor measured
// in the same run: a plain loop copying the same specs into fresh objects. Target: median ≤ 50 ms.
import { performance } from 'node:perf_hooks';
import { createResourceCatalog } from '@trellis/catalog';
import type { CatalogBundledView, CatalogPluginView } from '@trellis/catalog';
import { RuntimeConfigSchema } from '@trellis/config';
import { resolveContract } from '@trellis/sdk';
import { PluginManifestSchema } from '@trellis/sdk/schema';
import type { ToolSpec } from '@trellis/sdk';

const PLUGINS = 100;
const TOOLS_PER_PLUGIN = 10;
const WARMUP = 30;
const RUNS = 301;

function schema(index: number): Record<string, unknown> {
  return {
    type: 'object',
    properties: {
      path: { type: 'string', description: `Path number ${index}` },
      limit: { type: 'integer', minimum: 1, maximum: 1000 },
      mode: { type: 'string', enum: ['fast', 'safe', 'thorough'] },
      options: { type: 'object', properties: { recursive: { type: 'boolean' }, pattern: { type: 'string' } } },
    },
    required: ['path'],
    additionalProperties: false,
  };
}

const plugins: CatalogPluginView[] = [];
const bundled: CatalogBundledView[] = [];
for (let p = 0; p < PLUGINS; p += 1) {
  const id = `plugin-${p}`;
  if (p % 2 === 0) {
    const tools: ToolSpec[] = Array.from({ length: TOOLS_PER_PLUGIN }, (_, t) => ({
      name: `tool_${t}`,
      description: `Does task ${t} of plugin ${p}: reads files, lists folders and reports results.`,
      inputSchema: schema(p * 100 + t),
      tags: ['files', `group-${t % 3}`],
      examples: [],
      contract: resolveContract({ capabilities: ['fs.read'], deadlineMs: 60_000 }),
    }));
    bundled.push({ manifest: { id }, tools });
    plugins.push({
      id,
      state: 'enabled',
      bundled: true,
      reasons: [],
      manifest: PluginManifestSchema.parse({ schema_version: 1, id, name: id, version: '1.0.0', kind: 'toolset' }),
    });
  } else {
    const manifest = PluginManifestSchema.parse({
      schema_version: 1,
      id,
      name: id,
      version: '1.0.0',
      kind: 'toolset',
      capabilities: ['process.spawn'],
      runtime: { type: 'process', command: 'node', args: ['x.js'] },
      tools: Array.from({ length: TOOLS_PER_PLUGIN }, (_, t) => ({
        name: `tool_${t}`,
        description: `Does task ${t} of plugin ${p} out of process.`,
        input_schema: schema(p * 100 + t),
        tags: ['external'],
        timeout_seconds: 45,
      })),
    });
    plugins.push({ id, state: 'enabled', bundled: false, reasons: [], manifest });
  }
}
const snapshot = { plugins };
const config = RuntimeConfigSchema.parse({ runtime: { tool_timeout_seconds: 60, policy: { deny: ['plugin-7.*'], ask: ['plugin-3.*'] } } });

// The floor: the least any builder must do, one fresh object per tool with its contract copied.
function floor(): unknown[] {
  const out: unknown[] = [];
  const specsById = new Map(bundled.map((b) => [b.manifest.id, b.tools]));
  for (const entry of plugins) {
    if (entry.bundled) {
      for (const spec of specsById.get(entry.id) ?? []) {
        out.push({
          name: `${entry.id}.${spec.name}`,
          plugin: entry.id,
          tool: spec.name,
          description: spec.description,
          tags: spec.tags,
          examples: spec.examples,
          inputSchema: spec.inputSchema,
          contract: { ...spec.contract },
          source: 'bundled',
        });
      }
    } else {
      for (const tool of entry.manifest?.tools ?? []) {
        out.push({
          name: `${entry.id}.${tool.name}`,
          plugin: entry.id,
          tool: tool.name,
          description: tool.description,
          tags: tool.tags,
          examples: [],
          inputSchema: tool.input_schema,
          contract: { sideEffects: false, deadlineMs: (tool.timeout_seconds ?? 30) * 1000 },
          source: 'manifest',
        });
      }
    }
  }
  return out;
}

const build = () => createResourceCatalog({ snapshot, bundled, config });

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

// Cold: the very first build in this process (nothing JIT-compiled yet), reported for honesty.
const coldStart = performance.now();
const tools = build().descriptors.length;
const coldMs = performance.now() - coldStart;
if (tools !== PLUGINS * TOOLS_PER_PLUGIN) throw new Error(`expected ${PLUGINS * TOOLS_PER_PLUGIN} tools, built ${tools}`);

for (let i = 0; i < WARMUP; i += 1) {
  build();
  floor();
}
const buildTimes: number[] = [];
const floorTimes: number[] = [];
const offeredTimes: number[] = [];
const searchTimes: number[] = [];
const renderTimes: number[] = [];
const warmSearchTimes: number[] = [];
let sink = 0;
// Interleaved so machine noise hits both alike.
for (let i = 0; i < RUNS; i += 1) {
  let start = performance.now();
  sink += floor().length;
  floorTimes.push(performance.now() - start);

  start = performance.now();
  const catalog = build();
  buildTimes.push(performance.now() - start);

  start = performance.now();
  sink += catalog.offered().length;
  offeredTimes.push(performance.now() - start);

  start = performance.now();
  sink += catalog.search('read files', { limit: 10 }).length;
  searchTimes.push(performance.now() - start);

  start = performance.now();
  sink += catalog.search('list folders', { limit: 10 }).length;
  warmSearchTimes.push(performance.now() - start);

  start = performance.now();
  sink += catalog.render('openai').length;
  renderTimes.push(performance.now() - start);
  if (i % 100 === 0) process.stderr.write(`run ${i}/${RUNS}\n`);
}

const round = (ms: number) => Math.round(ms * 1000) / 1000;
const buildMedian = median(buildTimes);
const floorMedian = median(floorTimes);
process.stderr.write(`offered ${sink > 0 ? 'ok' : 'empty'}; build median ${round(buildMedian)} ms, floor ${round(floorMedian)} ms\n`);
process.stdout.write(
  `BENCH ${JSON.stringify({
    name: 'catalog',
    tools,
    plugins: PLUGINS,
    runs: RUNS,
    median_ms: round(buildMedian),
    floor_median_ms: round(floorMedian),
    ratio: round(buildMedian / floorMedian),
    cold_first_build_ms: round(coldMs),
    availability_offered_median_ms: round(median(offeredTimes)),
    first_search_with_index_build_median_ms: round(median(searchTimes)),
    warm_search_median_ms: round(median(warmSearchTimes)),
    render_openai_median_ms: round(median(renderTimes)),
    target: '1,000 tools build in <= 50 ms (median)',
    pass: buildMedian <= 50,
  })}\n`,
);
