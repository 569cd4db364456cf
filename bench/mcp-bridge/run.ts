// bench/mcp-bridge: what the mcp bridge adds to an MCP tool call. The same stdio server program
// (the official SDK's low-level Server with one `echo` tool, bench/process/mcp-echo-server.mjs) is
// called (a) through the bridge's tool source (`mcp.bench.echo`: name split, pin check, the SDK
// client, result mapping) and (b) by the official SDK client v2 directly. Both servers are spawned
// the same way (a session and process group of their own, minimal environment): on Linux with
// autogroup scheduling a new session alone changes wake-up latency under load (see bench/process),
// so the SDK's stock StdioClientTransport, which cannot start a session, would measure the
// scheduler, not the bridge. Calls alternate one by one so load swings hit both alike.
// Target: added p50 <= 0.1 ms.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { Client } from '@modelcontextprotocol/client';
import { createMcpToolSource, GroupStdioTransport, McpSettingsSchema, stdioEnvironment } from '@trellis/plugin-mcp';
import { silentLogger, type ToolContext } from '@trellis/sdk';

const here = dirname(fileURLToPath(import.meta.url));
const SERVER = join(here, '..', 'process', 'mcp-echo-server.mjs');
const ROUNDS = 5;
const CALLS_PER_ROUND = 1000;
const WARMUP = 300;

const log = (text: string) => process.stderr.write(`${text}\n`);
const round3 = (n: number) => Math.round(n * 1000) / 1000;
function summary(samples: number[]): { p50: number; p99: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return { p50: at(0.5), p99: at(0.99) };
}

const state = mkdtempSync(join(tmpdir(), 'trellis-bench-mcp-'));
const source = createMcpToolSource({
  settings: McpSettingsSchema.parse({ servers: [{ name: 'bench', command: process.execPath, args: [SERVER] }] }),
  env: process.env,
  workspaceRoot: here,
  logger: silentLogger,
  stateDir: state,
});
await source.start();
const never = new AbortController().signal;
const host = { plugins: () => [], explainPlugin: () => undefined, searchTools: () => [] };
const ctx: ToolContext = {
  signal: never,
  logger: silentLogger,
  config: {},
  workspace: { root: here },
  env: process.env,
  callId: 'bench',
  tool: 'mcp.bench.echo',
  host,
};

const direct = new Client({ name: 'bench', version: '1.0.0' });
await direct.connect(
  new GroupStdioTransport({ command: process.execPath, args: [SERVER], env: stdioEnvironment(process.env, {}), cwd: here }),
);
await direct.listTools();

async function bridged(i: number, out: number[] | null): Promise<void> {
  const t0 = performance.now();
  const value = (await source.call('bench.echo', { text: 'hello', n: i }, ctx)) as { n?: number };
  const t1 = performance.now();
  if (value.n !== i) throw new Error(`bridged call answered ${JSON.stringify(value)}`);
  out?.push(t1 - t0);
}
async function sdk(i: number, out: number[] | null): Promise<void> {
  const t0 = performance.now();
  const result = await direct.callTool({ name: 'echo', arguments: { text: 'hello', n: i } });
  const t1 = performance.now();
  if ((result.structuredContent as { n?: number } | undefined)?.n !== i) throw new Error('direct call failed');
  out?.push(t1 - t0);
}

for (let i = 0; i < WARMUP; i += 1) {
  await bridged(i, null);
  await sdk(i, null);
}
const samples = { bridged: [] as number[], direct: [] as number[] };
for (let round = 0; round < ROUNDS; round += 1) {
  for (let i = 0; i < CALLS_PER_ROUND; i += 1) {
    const n = round * CALLS_PER_ROUND + i;
    if (i % 2 === 0) {
      await bridged(n, samples.bridged);
      await sdk(n, samples.direct);
    } else {
      await sdk(n, samples.direct);
      await bridged(n, samples.bridged);
    }
  }
  log(`round ${round + 1}/${ROUNDS} done`);
}
await source.close();
await direct.close();
rmSync(state, { recursive: true, force: true });

const b = summary(samples.bridged);
const d = summary(samples.direct);
const added = b.p50 - d.p50;
log(`bridged p50 ${b.p50.toFixed(4)} ms p99 ${b.p99.toFixed(4)} ms`);
log(`direct  p50 ${d.p50.toFixed(4)} ms p99 ${d.p99.toFixed(4)} ms`);
log(`added p50 ${added.toFixed(4)} ms (${(b.p50 / d.p50).toFixed(3)}×)`);
const result = {
  name: 'mcp-bridge',
  calls_each: ROUNDS * CALLS_PER_ROUND,
  bridged_p50_ms: round3(b.p50),
  bridged_p99_ms: round3(b.p99),
  direct_p50_ms: round3(d.p50),
  direct_p99_ms: round3(d.p99),
  added_p50_ms: round3(added),
  ratio: round3(b.p50 / d.p50),
  target: 'a bridged call adds <= 0.1 ms p50 over a direct SDK client call to the same server',
  pass: added <= 0.1,
};
process.stdout.write(`BENCH ${JSON.stringify(result)}\n`);
