// bench/stall: does hostile input stall the host? Echo calls (builtin-tools.echo through the
// runtime) every 10 ms while hostile inputs run at once through the real tools of the built app:
// a 2 MB page of 400 000 nested <div> (core-web, from a local server on 127.0.0.1), JSON rows
// nested 200 000 deep (core-table.describe), a 50 MB CSV (core-table.describe), the costliest glob
// core-fs admits over a tree of long names, and 300 concurrent cold calls to an external process
// plugin. Reports the event-loop delay (monitorEventLoopDelay) max and p99, the echo latency p99,
// and how long each hostile call took against its deadline.
// Targets: max delay ≤ 100 ms, echo p99 ≤ 20 ms, every hostile call ends by its deadline + 1 s.
import { closeSync, cpSync, existsSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';

const dist = join(process.cwd(), 'apps/trellis/dist/index.js');
if (!existsSync(dist)) {
  process.stderr.write('build first: npx -y pnpm@10 build (pnpm bench does it)\n');
  process.exit(2);
}
// The built embedding API: the bundled plugins run exactly as a user's host runs them.
interface Host {
  runtime: {
    invoke(request: {
      name: string;
      input?: unknown;
    }): Promise<{ ok: true; value: unknown } | { ok: false; error: { code: string; message: string } }>;
  };
  dispose(): Promise<void>;
}
const { assemble } = (await import(pathToFileURL(dist).href)) as {
  assemble(options: {
    workspace: string;
    configPath: string;
    pluginPaths: string[];
    home: string;
    env: Record<string, string>;
  }): Promise<Host>;
};

const TOOL_TIMEOUT_S = 5;
const DEADLINE_MS = TOOL_TIMEOUT_S * 1000;
const COLD_CALLS = Number(process.env.BENCH_COLD_CALLS ?? 300);
const ECHO_EVERY_MS = 10;

// ── the hostile inputs ──────────────────────────────────────────────────────────────────────────
const home = mkdtempSync(join(tmpdir(), 'trellis-bench-stall-'));
const workspace = join(home, 'ws');
mkdirSync(workspace);
const deep = 200_000;
writeFileSync(join(workspace, 'deep.json'), `[{"a":${'['.repeat(deep)}${']'.repeat(deep)}}]`);
{
  // Written in 1 MB blocks, so the bench's own heap holds no 50 MB string while it measures.
  const block = Buffer.from('alpha,12345,2024-01-01,"a quoted, field",3.14159,true\n'.repeat(20_000));
  const fd = openSync(join(workspace, 'big.csv'), 'w');
  writeSync(fd, 'name,n,date,text,x,flag\n');
  for (let written = 0; written < 50 * 1024 * 1024; written += block.length) writeSync(fd, block);
  closeSync(fd);
}
// Long names that almost match `**/*a*a*b`: each failing match backtracks over the whole name.
for (let d = 0; d < 20; d += 1) {
  const dir = join(workspace, 'tree', `d${d}`);
  mkdirSync(dir, { recursive: true });
  for (let f = 0; f < 50; f += 1) writeFileSync(join(dir, `${'a'.repeat(200)}${f}`), '');
}
const page = Buffer.from(`<!doctype html><html><body>${'<div>'.repeat(400_000)}x${'</div>'.repeat(400_000)}</body></html>`);
const server = createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': page.length });
  res.end(page);
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const port = (server.address() as AddressInfo).port;

// The external process plugin: the process bench's NDJSON echo child.
const pluginDir = join(home, 'plugins', 'stall-echo');
mkdirSync(pluginDir, { recursive: true });
cpSync(join(process.cwd(), 'bench/process/echo-plugin.mjs'), join(pluginDir, 'echo-plugin.mjs'));
writeFileSync(
  join(pluginDir, 'plugin.toml'),
  [
    'schema_version = 1',
    'id = "stall-echo"',
    'name = "Stall echo"',
    'version = "1.0.0"',
    'kind = "toolset"',
    'description = "Echoes its arguments"',
    '[runtime]',
    'type = "process"',
    `command = ${JSON.stringify(process.execPath)}`,
    'args = ["echo-plugin.mjs"]',
    `timeout_seconds = ${TOOL_TIMEOUT_S}`,
    '[[tools]]',
    'name = "echo"',
    'description = "Echo"',
    'input_schema = { type = "object" }',
    '',
  ].join('\n'),
);
const configPath = join(home, 'runtime.toml');
writeFileSync(
  configPath,
  [
    '[plugins]',
    'allow = ["stall-echo"]',
    '[runtime]',
    `tool_timeout_seconds = ${TOOL_TIMEOUT_S}`,
    '[runtime.tools.web]',
    'private_hosts = ["127.0.0.1"]',
    `timeout_seconds = ${TOOL_TIMEOUT_S}`,
    '[runtime.tools.table]',
    'max_bytes = 67108864',
    'max_rows = 2000000',
    '',
  ].join('\n'),
);

const host = await assemble({
  workspace,
  configPath,
  pluginPaths: [join(home, 'plugins')],
  home,
  env: { PATH: process.env.PATH ?? '', HOME: home },
});

// Warm only the echo path the probe uses; everything hostile starts cold.
for (let i = 0; i < 50; i += 1) await host.runtime.invoke({ name: 'builtin-tools.echo', input: { text: 'warm' } });

// ── the measurement ─────────────────────────────────────────────────────────────────────────────
/** Echo every ECHO_EVERY_MS while `work` runs; the event-loop delay and echo latencies meanwhile. */
async function measure<T>(work: () => Promise<T>): Promise<{ result: T; delayMaxMs: number; delayP99Ms: number; echoMs: number[] }> {
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  const echoMs: number[] = [];
  let probing = true;
  const probe = (async () => {
    while (probing) {
      const t0 = performance.now();
      const outcome = await host.runtime.invoke({ name: 'builtin-tools.echo', input: { text: 'probe' } });
      echoMs.push(performance.now() - t0);
      if (!outcome.ok) throw new Error(`echo failed: ${JSON.stringify(outcome)}`);
      await new Promise((resolve) => setTimeout(resolve, ECHO_EVERY_MS));
    }
  })();
  const result = await work();
  probing = false;
  await probe;
  delay.disable();
  return { result, delayMaxMs: delay.max / 1e6, delayP99Ms: delay.percentile(99) / 1e6, echoMs };
}
const p99 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(0.99 * xs.length))] ?? 0;

// The floor: the same probe for 3 s with nothing else running, in the same process and run, so a
// loaded machine's own scheduling delay is visible beside the figures under attack.
// Start both phases from a collected heap (the bench runs with --expose-gc), so the bench's own
// setup garbage is not billed to either.
const collect = (globalThis as { gc?: () => void }).gc ?? (() => {});
collect();
const floor = await measure(() => new Promise((resolve) => setTimeout(resolve, 3000)));

interface Hostile {
  readonly name: string;
  readonly ms: number;
  readonly outcome: string;
}
// BENCH_STALL_ONLY=<substring> runs only the hostile calls whose name holds it (to study one).
const only = process.env.BENCH_STALL_ONLY;
async function hostile(name: string, tool: string, input: Record<string, unknown>): Promise<Hostile> {
  if (only !== undefined && !name.includes(only)) return { name, ms: 0, outcome: 'skipped' };
  const t0 = performance.now();
  const outcome = await host.runtime.invoke({ name: tool, input });
  return { name, ms: performance.now() - t0, outcome: outcome.ok ? 'ok' : outcome.error.code };
}
collect();
const started = performance.now();
const attack = await measure(() =>
  Promise.all([
    hostile('400k nested <div> page', 'core-web.fetch', { url: `http://127.0.0.1:${port}/deep.html` }),
    hostile('JSON nested 200k deep', 'core-table.describe', { path: 'deep.json' }),
    hostile('50 MB CSV', 'core-table.describe', { path: 'big.csv' }),
    hostile('costliest admitted glob', 'core-fs.glob', { pattern: '**/*a*a*b' }),
    ...Array.from({ length: COLD_CALLS }, (_, i) => hostile('cold process call', 'stall-echo.echo', { n: i })),
  ]),
);
const hostiles = attack.result;
const wallMs = performance.now() - started;
await host.dispose();
server.close();
rmSync(home, { recursive: true, force: true });

// ── the report ──────────────────────────────────────────────────────────────────────────────────
const { delayMaxMs, delayP99Ms, echoMs } = attack;
const echoP99 = p99(echoMs);
const load = loadavg()[0] ?? 0;
const single = hostiles.slice(0, 4);
const coldCalls = hostiles.slice(4);
const coldMaxMs = Math.max(0, ...coldCalls.map((h) => h.ms));
const coldCodes = Object.entries(
  coldCalls.reduce<Record<string, number>>((acc, h) => ({ ...acc, [h.outcome]: (acc[h.outcome] ?? 0) + 1 }), {}),
)
  .map(([code, n]) => `${code} ×${n}`)
  .join(', ');
const lateOnes = hostiles.filter((h) => h.ms > DEADLINE_MS + 1000);
for (const h of single) process.stderr.write(`${h.name}: ${h.outcome} after ${h.ms.toFixed(0)} ms (deadline ${DEADLINE_MS} ms)\n`);
process.stderr.write(`${COLD_CALLS} cold process calls: ${coldCodes}; slowest ${coldMaxMs.toFixed(0)} ms\n`);
process.stderr.write(
  `idle floor (3 s, same run): event-loop delay max ${floor.delayMaxMs.toFixed(1)} ms, p99 ${floor.delayP99Ms.toFixed(1)} ms, echo p99 ${p99(floor.echoMs).toFixed(2)} ms; 1-min load average ${load.toFixed(1)} on ${availableParallelism()} cores\n`,
);
process.stderr.write(
  `under attack: event-loop delay: max ${delayMaxMs.toFixed(1)} ms, p99 ${delayP99Ms.toFixed(1)} ms; echo every ${ECHO_EVERY_MS} ms: ${echoMs.length} calls, p99 ${echoP99.toFixed(2)} ms; all done in ${wallMs.toFixed(0)} ms\n`,
);
const pass = delayMaxMs <= 100 && echoP99 <= 20 && lateOnes.length === 0;
process.stdout.write(
  `BENCH ${JSON.stringify({
    name: 'stall',
    event_loop_delay_max_ms: +delayMaxMs.toFixed(2),
    event_loop_delay_p99_ms: +delayP99Ms.toFixed(2),
    echo_calls: echoMs.length,
    echo_p99_ms: +echoP99.toFixed(3),
    floor_event_loop_delay_max_ms: +floor.delayMaxMs.toFixed(2),
    floor_event_loop_delay_p99_ms: +floor.delayP99Ms.toFixed(2),
    floor_echo_p99_ms: +p99(floor.echoMs).toFixed(3),
    load_average_1m: +load.toFixed(2),
    hostile: Object.fromEntries(single.map((h) => [h.name, { outcome: h.outcome, ms: Math.round(h.ms) }])),
    cold_process_calls: { count: COLD_CALLS, outcomes: coldCodes, slowest_ms: Math.round(coldMaxMs) },
    deadline_ms: DEADLINE_MS,
    late_calls: lateOnes.length,
    target: 'event-loop delay max <= 100 ms, echo p99 <= 20 ms, every hostile call ends by its deadline + 1 s',
    pass,
  })}\n`,
);
process.exit(pass ? 0 : 1);
