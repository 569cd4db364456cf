// bench/mcp-bridge: what the mcp bridge adds to an MCP tool call. The same stdio server program
// (the official SDK v2's low-level Server with one no-op tool, bench/mcp-sdk-server.mjs, shared with
// bench/mcp) is called (a) through the bridge's tool source (`mcp.bench.noop`: name split, pin check, the SDK
// client, result mapping) and (b) by the official SDK client v2 directly. Both servers are spawned
// the same way (a session and process group of their own, minimal environment): on Linux with
// autogroup scheduling a new session alone changes wake-up latency under load (see bench/process),
// so the SDK's stock StdioClientTransport, which cannot start a session, would measure the
// scheduler, not the bridge. Calls alternate one by one so load swings hit both alike.
// Target: added p50 <= 0.1 ms.
import { Client } from '@modelcontextprotocol/client';
import { createMcpToolSource, GroupStdioTransport, McpSettingsSchema, stdioEnvironment } from '@trellis/plugin-mcp';
import { silentLogger, type ToolContext } from '@trellis/sdk';
import { SDK_SERVER, SDK_SERVER_TOOL, log, makeSandbox, round3, summary } from '../mcpShared.ts';

const ROUNDS = 5;
const CALLS_PER_ROUND = 1000;
const WARMUP = 300;

const sandbox = makeSandbox();
const here = sandbox.workspace;
const source = createMcpToolSource({
  settings: McpSettingsSchema.parse({ servers: [{ name: 'bench', command: process.execPath, args: [SDK_SERVER] }] }),
  env: process.env,
  workspaceRoot: here,
  logger: silentLogger,
  stateDir: sandbox.state,
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
  tool: `mcp.bench.${SDK_SERVER_TOOL}`,
  host,
};

const direct = new Client({ name: 'bench', version: '1.0.0' });
await direct.connect(
  new GroupStdioTransport({ command: process.execPath, args: [SDK_SERVER], env: stdioEnvironment(process.env, {}), cwd: here }),
);
await direct.listTools();

// This process's CPU time per call (µs, user + system), summed per side: what the bridge itself
// costs, which machine load does not change (wall-clock p50 on a loaded machine is mostly waiting
// for a core, and that wait grows with the work done).
const cpu = { bridged: 0, direct: 0 };
const cpuSince = (start: NodeJS.CpuUsage): number => {
  const used = process.cpuUsage(start);
  return used.user + used.system;
};

async function bridged(i: number, out: number[] | null): Promise<void> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const value = (await source.call(`bench.${SDK_SERVER_TOOL}`, { text: 'hello', n: i }, ctx)) as { n?: number };
  const t1 = performance.now();
  if (out !== null) cpu.bridged += cpuSince(c0);
  if (value.n !== i) throw new Error(`bridged call answered ${JSON.stringify(value)}`);
  out?.push(t1 - t0);
}
async function sdk(i: number, out: number[] | null): Promise<void> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const result = await direct.callTool({ name: SDK_SERVER_TOOL, arguments: { text: 'hello', n: i } });
  const t1 = performance.now();
  if (out !== null) cpu.direct += cpuSince(c0);
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
sandbox.remove();

const b = summary(samples.bridged);
const d = summary(samples.direct);
const added = b.p50 - d.p50;
log(`bridged p50 ${b.p50.toFixed(4)} ms p99 ${b.p99.toFixed(4)} ms`);
log(`direct  p50 ${d.p50.toFixed(4)} ms p99 ${d.p99.toFixed(4)} ms`);
log(`added p50 ${added.toFixed(4)} ms (${(b.p50 / d.p50).toFixed(3)}×)`);
const cpuBridged = cpu.bridged / samples.bridged.length;
const cpuDirect = cpu.direct / samples.direct.length;
log(
  `client CPU per call: bridged ${cpuBridged.toFixed(1)} µs, direct ${cpuDirect.toFixed(1)} µs, added ${(cpuBridged - cpuDirect).toFixed(1)} µs`,
);
const result = {
  name: 'mcp-bridge',
  calls_each: ROUNDS * CALLS_PER_ROUND,
  bridged_p50_ms: round3(b.p50),
  bridged_p99_ms: round3(b.p99),
  direct_p50_ms: round3(d.p50),
  direct_p99_ms: round3(d.p99),
  added_p50_ms: round3(added),
  ratio: round3(b.p50 / d.p50),
  bridged_cpu_us: round3(cpuBridged),
  direct_cpu_us: round3(cpuDirect),
  added_cpu_us: round3(cpuBridged - cpuDirect),
  target: 'a bridged call adds <= 0.1 ms p50 over a direct SDK client call to the same server',
  pass: added <= 0.1,
};
process.stdout.write(`BENCH ${JSON.stringify(result)}\n`);
