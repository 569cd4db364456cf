// bench/invoke: what ToolRuntime.invoke adds over calling the tool's function directly, for a
// no-op in-process tool with a small valid input and one execution hook attached; and, in the
// same run, the round trip of the same tool through the MCP TypeScript SDK (McpServer + Client
// over InMemoryTransport). Targets: ≤ 2 µs added at p50, and invoke ≥ 10× faster than MCP (p50).
// Samples are per call (performance.now around each await), taken in interleaved blocks so drift
// and GC hit every contender alike.
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { definePlugin, defineTool, resolveContract } from '@trellis/sdk';
import type { PluginDefinition, ToolContext } from '@trellis/sdk';
import type { BundledPluginDescriptor } from '@trellis/sdk/internal';
import { z } from 'zod';
import { BENCH_HOST, BENCH_MANIFEST, benchRuntime } from '../benchRuntime.ts';

const BLOCKS = 40;
const PER_BLOCK = 2_000;
const MCP_PER_BLOCK = 100;
const WARMUP = 20_000;

const NoopInput = z.object({ text: z.string().max(100) });
const noop = defineTool({
  name: 'noop',
  description: 'Returns its input.',
  input: NoopInput,
  run: (input) => input,
});
const plugin = definePlugin({ manifest: { id: 'bench' }, tools: [noop] });
const inputSchema = {
  type: 'object',
  properties: { text: { type: 'string', maxLength: 100 } },
  required: ['text'],
  additionalProperties: false,
};
const spec = { name: 'noop', description: 'Returns its input.', inputSchema, tags: [], examples: [], contract: resolveContract({}) };
const descriptor: BundledPluginDescriptor = {
  packageName: '@trellis/plugin-bench',
  manifest: BENCH_MANIFEST,
  tools: [spec],
  load: async () => plugin as PluginDefinition,
};
let events = 0;
const { runtime } = benchRuntime(descriptor, [() => void (events += 1)]);

// The direct call: the same function, awaited, with a context built once.
const ctx = {
  signal: new AbortController().signal,
  logger: console,
  config: {},
  workspace: { root: '' },
  env: {},
  callId: 'x',
  tool: 'bench.noop',
  host: BENCH_HOST,
} as unknown as ToolContext;
const direct = async (input: { text: string }) => await noop.run(input, ctx);

// MCP: the same tool on an McpServer, called by a Client over the in-memory transport.
const server = new McpServer({ name: 'bench', version: '1.0.0' });
server.registerTool('noop', { description: 'Returns its input.', inputSchema: { text: z.string().max(100) } }, async ({ text }) => ({
  content: [{ type: 'text', text }],
}));
const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
const client = new Client({ name: 'bench-client', version: '1.0.0' });
await Promise.all([server.connect(serverTransport), client.connect(clientTransport)]);

const request = { name: 'bench.noop', input: { text: 'hello' } };
const check = await runtime.invoke(request);
if (!check.ok) throw new Error(`the bench tool failed: ${JSON.stringify(check)}`);
const mcpCheck = await client.callTool({ name: 'noop', arguments: { text: 'hello' } });
if (mcpCheck.isError) throw new Error('the MCP bench tool failed');

const directSamples: number[] = [];
const runtimeSamples: number[] = [];
const mcpSamples: number[] = [];

async function sampleDirect(n: number, out?: number[]): Promise<void> {
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await direct({ text: 'hello' });
    const t1 = performance.now();
    out?.push(t1 - t0);
  }
}
async function sampleRuntime(n: number, out?: number[]): Promise<void> {
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await runtime.invoke({ name: 'bench.noop', input: { text: 'hello' } });
    const t1 = performance.now();
    out?.push(t1 - t0);
  }
}
async function sampleMcp(n: number, out?: number[]): Promise<void> {
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await client.callTool({ name: 'noop', arguments: { text: 'hello' } });
    const t1 = performance.now();
    out?.push(t1 - t0);
  }
}

console.error(`warming up (${WARMUP} calls each)…`);
await sampleDirect(WARMUP);
await sampleRuntime(WARMUP);
await sampleMcp(WARMUP / 20);
for (let block = 0; block < BLOCKS; block++) {
  await sampleDirect(PER_BLOCK, directSamples);
  await sampleRuntime(PER_BLOCK, runtimeSamples);
  await sampleMcp(MCP_PER_BLOCK, mcpSamples);
  if (block % 10 === 9) console.error(`  block ${block + 1}/${BLOCKS}`);
}

function quantile(samples: number[], q: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
}
const us = (ms: number): number => Math.round(ms * 1000 * 1000) / 1000;
const directP50 = quantile(directSamples, 0.5);
const directP99 = quantile(directSamples, 0.99);
const runtimeP50 = quantile(runtimeSamples, 0.5);
const runtimeP99 = quantile(runtimeSamples, 0.99);
const mcpP50 = quantile(mcpSamples, 0.5);
const mcpP99 = quantile(mcpSamples, 0.99);
const addedP50 = runtimeP50 - directP50;
const addedP99 = runtimeP99 - directP99;
const ratio = mcpP50 / runtimeP50;

console.error(`direct call        p50 ${us(directP50)} µs  p99 ${us(directP99)} µs  (${directSamples.length} samples)`);
console.error(
  `runtime.invoke     p50 ${us(runtimeP50)} µs  p99 ${us(runtimeP99)} µs  (${runtimeSamples.length} samples, ${events} hook events)`,
);
console.error(`  added            p50 ${us(addedP50)} µs  p99 ${us(addedP99)} µs`);
console.error(`MCP in-memory      p50 ${us(mcpP50)} µs  p99 ${us(mcpP99)} µs  (${mcpSamples.length} samples)`);
console.error(`MCP / runtime      ${ratio.toFixed(1)}× (p50)`);

await client.close();
await server.close();
await runtime.dispose();

const pass = addedP50 <= 0.002 && ratio >= 10;
console.log(
  `BENCH ${JSON.stringify({
    name: 'invoke',
    direct_p50_us: us(directP50),
    direct_p99_us: us(directP99),
    invoke_p50_us: us(runtimeP50),
    invoke_p99_us: us(runtimeP99),
    added_p50_us: us(addedP50),
    added_p99_us: us(addedP99),
    mcp_p50_us: us(mcpP50),
    mcp_p99_us: us(mcpP99),
    mcp_over_invoke_p50: Math.round(ratio * 10) / 10,
    target: 'added p50 <= 2 µs over a direct call; invoke p50 >= 10x faster than the MCP SDK in-memory round trip',
    pass,
  })}`,
);
