// bench/process: latency of one call to a persistent process plugin through Trellis's process
// adapter, against (a) the raw floor: the same kind of child driven by a bare newline-delimited
// JSON loop, and (b) an MCP stdio round trip with the official SDK (its low-level Server, no
// per-call validation). Same run, same machine, calls interleaved. All three children are
// started alike: through Trellis's launcher wrapper (on Linux its PID namespace, `unshare`), in
// their own session and process group, with the same allow-listed environment.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { isolatedCommandLine, prepareChildLauncher } from '@trellis/sdk/internal';
import { PluginManifestSchema } from '@trellis/sdk/schema';
import { createProcessImplementation } from '@trellis/runtime/external';
import type { ProcessRuntime } from '@trellis/runtime/external';

const here = dirname(fileURLToPath(import.meta.url));
const ECHO = join(here, 'echo-plugin.mjs');
const MCP_SERVER = join(here, 'mcp-echo-server.mjs');
const ROUNDS = 5;
const CALLS_PER_ROUND = 2000;
const WARMUP = 300;
const SPAWNS = 5;

const log = (text: string) => process.stderr.write(`${text}\n`);

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}
function summary(samples: number[]): { p50: number; p99: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  return { p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99) };
}
function median(values: number[]): number {
  return summary(values).p50;
}
const round3 = (n: number) => Math.round(n * 1000) / 1000;

// ── (1) Trellis process adapter ─────────────────────────────────────────────────────────────────
const runtime: ProcessRuntime = {
  type: 'process',
  command: process.execPath,
  args: [ECHO],
  timeout_seconds: 30,
  env: {},
  restart_on_crash: true,
  max_restarts: 3,
  restart_delay_seconds: 1,
  health_check_interval_seconds: 0,
};
const manifest = PluginManifestSchema.parse({
  schema_version: 1,
  id: 'bench-echo',
  name: 'Bench echo',
  version: '1.0.0',
  kind: 'toolset',
  runtime,
});
/**
 * One call as the runtime hands it to an implementation (ToolRuntime's Invocation): the
 * AbortSignal is made only if something reads it, and interruption is also offered as a plain
 * listener (`onInterrupt`). A call that is never interrupted needs neither.
 */
class BenchCall {
  readonly callId: string;
  readonly tool = 'echo';
  readonly deadlineAt = performance.now() + 30_000;
  #controller: AbortController | undefined;
  constructor(
    readonly input: unknown,
    n: number,
  ) {
    this.callId = `b${n}`;
  }
  get signal(): AbortSignal {
    return (this.#controller ??= new AbortController()).signal;
  }
  onInterrupt(): () => void {
    return () => {};
  }
}

function newAdapter() {
  return createProcessImplementation({ pluginId: 'bench-echo', manifest, pluginDir: here, runtime, env: process.env });
}

async function adapterCalls(impl: ReturnType<typeof newAdapter>, count: number, out: number[] | null, first = 0): Promise<void> {
  for (let i = first; i < first + count; i += 1) {
    const input = { text: 'hello', n: i };
    const t0 = performance.now();
    const outcome = await impl.call(new BenchCall(input, i));
    const t1 = performance.now();
    if (!outcome.ok) throw new Error(`adapter call failed: ${JSON.stringify(outcome)}`);
    out?.push(t1 - t0);
  }
}

// ── how the peers are started ───────────────────────────────────────────────────────────────────
// The peers' children are spawned as the adapter spawns its own: through the launcher's wrapper
// (`unshare --pid … setpriv …` where the machine allows, see launchChild.ts), in their own session
// and process group, with the allow-listed environment, stderr piped. So the ratios isolate the
// protocol work: with autogroup scheduling (Linux) a new session alone changes wake-up latency
// under load, and the wrapper adds a process between host and child.
const isolation = await prepareChildLauncher();
log(`children of all three contenders: ${isolation.detail}`);
const peers: ChildProcessWithoutNullStreams[] = [];
function spawnPeer(script: string): ChildProcessWithoutNullStreams {
  const env: Record<string, string> = {};
  for (const name of ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR'])
    if (process.env[name] !== undefined) env[name] = process.env[name]!;
  const line = isolatedCommandLine({ command: process.execPath, args: [script] });
  const child = spawn(line.command, line.args, { stdio: ['pipe', 'pipe', 'pipe'], env, detached: true });
  peers.push(child);
  return child;
}
/** Ends a peer as the adapter ends its child: end of input, then the whole group. */
function stopPeer(child: ChildProcessWithoutNullStreams): void {
  child.stdin.end();
  try {
    if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

// ── (2) raw newline-delimited JSON floor ────────────────────────────────────────────────────────
function rawClient() {
  const child = spawnPeer(ECHO);
  child.stderr.resume();
  let buffer = '';
  let waiting: ((line: string) => void) | undefined;
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    buffer += chunk;
    let nl;
    while ((nl = buffer.indexOf('\n')) !== -1) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      const w = waiting;
      waiting = undefined;
      w?.(line);
    }
  });
  let id = 0;
  const roundTrip = (body: Record<string, unknown>) =>
    new Promise<unknown>((resolve) => {
      waiting = (line) => resolve(JSON.parse(line));
      child.stdin.write(`${JSON.stringify({ id: ++id, ...body })}\n`);
    });
  return { child, roundTrip };
}

async function rawCalls(raw: ReturnType<typeof rawClient>, count: number, out: number[] | null, first = 0): Promise<void> {
  for (let i = first; i < first + count; i += 1) {
    const t0 = performance.now();
    const reply = (await raw.roundTrip({ type: 'call_tool', tool_name: 'echo', arguments: { text: 'hello', n: i } })) as {
      success?: boolean;
    };
    const t1 = performance.now();
    if (reply.success !== true) throw new Error('raw call failed');
    out?.push(t1 - t0);
  }
}

// ── (3) MCP stdio with the official SDK ─────────────────────────────────────────────────────────
/**
 * The SDK's stdio client transport, over a child spawned like the others (StdioClientTransport
 * spawns its own, in the host's session and without the wrapper). Framing as the SDK's: its
 * ReadBuffer and serializeMessage, one write per message.
 */
class PeerStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #buffer = new ReadBuffer();
  constructor(script: string) {
    this.#child = spawnPeer(script);
  }
  async start(): Promise<void> {
    this.#child.stderr.pipe(process.stderr);
    this.#child.stdout.on('data', (chunk: Buffer) => {
      this.#buffer.append(chunk);
      for (let message = this.#buffer.readMessage(); message !== null; message = this.#buffer.readMessage()) this.onmessage?.(message);
    });
    this.#child.on('close', () => this.onclose?.());
    this.#child.on('error', (error) => this.onerror?.(error));
  }
  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.#child.stdin.write(serializeMessage(message))) resolve();
      else this.#child.stdin.once('drain', resolve);
    });
  }
  async close(): Promise<void> {
    stopPeer(this.#child);
  }
}

async function mcpClient(): Promise<Client> {
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(new PeerStdioTransport(MCP_SERVER));
  return client;
}

async function mcpCalls(client: Client, count: number, out: number[] | null, first = 0): Promise<void> {
  for (let i = first; i < first + count; i += 1) {
    const t0 = performance.now();
    const result = await client.callTool({ name: 'echo', arguments: { text: 'hello', n: i } });
    const t1 = performance.now();
    if (result.isError) throw new Error('mcp call failed');
    out?.push(t1 - t0);
  }
}

// ── spawn + initialize ──────────────────────────────────────────────────────────────────────────
const adapterStart: number[] = [];
const mcpStart: number[] = [];
for (let i = 0; i < SPAWNS; i += 1) {
  let t0 = performance.now();
  const impl = newAdapter();
  await impl.start();
  adapterStart.push(performance.now() - t0);
  await impl.dispose();
  t0 = performance.now();
  const client = await mcpClient();
  mcpStart.push(performance.now() - t0);
  await client.close();
}
log(
  `spawn + initialize (+ get_tools): adapter ${median(adapterStart).toFixed(1)} ms, MCP connect ${median(mcpStart).toFixed(1)} ms (medians of ${SPAWNS})`,
);

// ── steady-state calls, interleaved in rounds so drift hits every contender alike ──────────────
const impl = newAdapter();
await impl.start();
const raw = rawClient();
await raw.roundTrip({ type: 'initialize', config: {} });
const mcp = await mcpClient();
await adapterCalls(impl, WARMUP, null);
await rawCalls(raw, WARMUP, null);
await mcpCalls(mcp, WARMUP, null);

// The adapter and its floor alternate call by call (who goes first alternates too), so machine
// load, which on a shared box swings from second to second, hits both alike. MCP runs in blocks
// of 100 calls between theirs: interleaving its much larger code path call by call would evict the adapter's
// from the CPU caches and measure that instead of the adapter.
const samples = { adapter: [] as number[], raw: [] as number[], mcp: [] as number[] };
const BLOCK = 100;
for (let round = 0; round < ROUNDS; round += 1) {
  for (let start = 0; start < CALLS_PER_ROUND; start += BLOCK) {
    for (let i = start; i < start + BLOCK; i += 1) {
      const n = round * CALLS_PER_ROUND + i;
      if (i % 2 === 0) {
        await adapterCalls(impl, 1, samples.adapter, n);
        await rawCalls(raw, 1, samples.raw, n);
      } else {
        await rawCalls(raw, 1, samples.raw, n);
        await adapterCalls(impl, 1, samples.adapter, n);
      }
    }
    await mcpCalls(mcp, BLOCK, samples.mcp, round * CALLS_PER_ROUND + start);
  }
  log(`round ${round + 1}/${ROUNDS} done`);
}

// ── throughput with 16 calls in flight ─────────────────────────────────────────────────────────
// Each contender runs CONCURRENT_CALLS calls through 16 loops that each keep one call in flight;
// the contenders take turns round by round. The ratios are taken pair by pair (the adapter's round
// against the raw round beside it) and their median reported: the raw floor's own rate swings by a
// third from round to round on a 2-core machine, depending on where the scheduler puts host and child.
const IN_FLIGHT = 16;
const CONCURRENT_CALLS = 10_000;
const CONCURRENT_ROUNDS = 7;

function rawConcurrentClient() {
  const child = spawnPeer(ECHO);
  child.stderr.resume();
  let buffer = '';
  const waiting = new Map<number, (reply: unknown) => void>();
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    buffer += chunk;
    let nl;
    while ((nl = buffer.indexOf('\n')) !== -1) {
      const reply = JSON.parse(buffer.slice(0, nl)) as { id: number };
      buffer = buffer.slice(nl + 1);
      const w = waiting.get(reply.id);
      waiting.delete(reply.id);
      w?.(reply);
    }
  });
  let id = 0;
  const roundTrip = (body: Record<string, unknown>) =>
    new Promise<unknown>((resolve) => {
      const n = ++id;
      waiting.set(n, resolve);
      child.stdin.write(`${JSON.stringify({ id: n, ...body })}\n`);
    });
  return { child, roundTrip };
}

async function throughput(one: (n: number) => Promise<void>): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < CONCURRENT_CALLS) await one(next++);
    }),
  );
  return CONCURRENT_CALLS / ((performance.now() - t0) / 1000);
}

const rawConcurrent = rawConcurrentClient();
await rawConcurrent.roundTrip({ type: 'initialize', config: {} });
const adapterOne = async (n: number) => {
  const outcome = await impl.call(new BenchCall({ text: 'hello', n }, n));
  if (!outcome.ok) throw new Error(`adapter call failed: ${JSON.stringify(outcome)}`);
};
const rawOne = async (n: number) => {
  const reply = (await rawConcurrent.roundTrip({ type: 'call_tool', tool_name: 'echo', arguments: { text: 'hello', n } })) as {
    success?: boolean;
  };
  if (reply.success !== true) throw new Error('raw call failed');
};
const mcpOne = async (n: number) => {
  const result = await mcp.callTool({ name: 'echo', arguments: { text: 'hello', n } });
  if (result.isError) throw new Error('mcp call failed');
};
await throughput(adapterOne);
await throughput(rawOne);
await throughput(mcpOne);
const rates = { adapter: [] as number[], raw: [] as number[], mcp: [] as number[] };
for (let round = 0; round < CONCURRENT_ROUNDS; round += 1) {
  if (round % 2 === 0) {
    rates.adapter.push(await throughput(adapterOne));
    rates.raw.push(await throughput(rawOne));
  } else {
    rates.raw.push(await throughput(rawOne));
    rates.adapter.push(await throughput(adapterOne));
  }
  rates.mcp.push(await throughput(mcpOne));
  log(`throughput round ${round + 1}/${CONCURRENT_ROUNDS} done`);
}
const adapterRate = median(rates.adapter);
const rawRate = median(rates.raw);
const mcpRate = median(rates.mcp);
const pairwise = (a: number[], b: number[]): number => median(a.map((rate, round) => rate / b[round]!));
const throughputVsRaw = pairwise(rates.adapter, rates.raw);
const throughputVsMcp = pairwise(rates.adapter, rates.mcp);
log(
  `${IN_FLIGHT} in flight: adapter ${adapterRate.toFixed(0)} calls/s, raw ${rawRate.toFixed(0)} calls/s, mcp ${mcpRate.toFixed(0)} calls/s`,
);
log(`${IN_FLIGHT} in flight: adapter/raw ${throughputVsRaw.toFixed(3)}×, adapter/mcp ${throughputVsMcp.toFixed(2)}×`);

await impl.dispose();
await mcp.close();
for (const child of peers) stopPeer(child);

const adapter = summary(samples.adapter);
const floor = summary(samples.raw);
const mcpStats = summary(samples.mcp);
const ratioVsRaw = adapter.p50 / floor.p50;
const speedupVsMcp = mcpStats.p50 / adapter.p50;
log(`adapter p50 ${adapter.p50.toFixed(4)} ms p99 ${adapter.p99.toFixed(4)} ms`);
log(`raw     p50 ${floor.p50.toFixed(4)} ms p99 ${floor.p99.toFixed(4)} ms`);
log(`mcp     p50 ${mcpStats.p50.toFixed(4)} ms p99 ${mcpStats.p99.toFixed(4)} ms`);
log(`adapter/raw ${ratioVsRaw.toFixed(3)}×, mcp/adapter ${speedupVsMcp.toFixed(2)}×`);
// Even an adapter that cost nothing would be only as fast as the raw floor: when MCP is less than
// 1.5× the floor itself, the "1.5× faster than MCP" target lies below the floor and cannot be met.
const mcpOverRaw = mcpStats.p50 / floor.p50;
const rawOverMcpRate = pairwise(rates.raw, rates.mcp);
const belowFloor = [
  ...(mcpOverRaw < 1.5 ? [`sequential: MCP p50 is only ${mcpOverRaw.toFixed(2)}x the raw floor`] : []),
  ...(rawOverMcpRate < 1.5 ? [`16 in flight: the raw floor is only ${rawOverMcpRate.toFixed(2)}x MCP's throughput`] : []),
];
log(
  `floors: MCP p50 = ${mcpOverRaw.toFixed(2)}x raw p50; raw throughput = ${rawOverMcpRate.toFixed(2)}x MCP's${belowFloor.length > 0 ? ` (below the floor: ${belowFloor.join('; ')})` : ''}`,
);

const result = {
  name: 'process',
  calls_each: ROUNDS * CALLS_PER_ROUND,
  adapter_p50_ms: round3(adapter.p50),
  adapter_p99_ms: round3(adapter.p99),
  raw_p50_ms: round3(floor.p50),
  raw_p99_ms: round3(floor.p99),
  mcp_p50_ms: round3(mcpStats.p50),
  mcp_p99_ms: round3(mcpStats.p99),
  ratio_vs_raw: round3(ratioVsRaw),
  speedup_vs_mcp: round3(speedupVsMcp),
  spawn_initialize_ms: round3(median(adapterStart)),
  mcp_connect_ms: round3(median(mcpStart)),
  in_flight: IN_FLIGHT,
  adapter_calls_per_s: Math.round(adapterRate),
  raw_calls_per_s: Math.round(rawRate),
  mcp_calls_per_s: Math.round(mcpRate),
  throughput_vs_raw: round3(throughputVsRaw),
  throughput_vs_mcp: round3(throughputVsMcp),
  mcp_over_raw_p50: round3(mcpOverRaw),
  raw_over_mcp_throughput: round3(rawOverMcpRate),
  targets_below_floor: belowFloor,
  isolation: isolation.mechanism,
  target:
    'sequential p50 <= 1.2x the raw NDJSON floor and >= 1.5x faster than MCP stdio (official SDK); with 16 in flight, throughput >= 0.8x raw and >= 1.5x MCP',
  pass: ratioVsRaw <= 1.2 && speedupVsMcp >= 1.5 && throughputVsRaw >= 0.8 && throughputVsMcp >= 1.5,
};
process.stdout.write(`BENCH ${JSON.stringify(result)}\n`);
