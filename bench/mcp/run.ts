// bench/mcp: one no-op tool call through `trellis serve` (stdio, the built binary, calling
// `builtin-tools.echo` with `{}`) against the official SDK v2's own minimal stdio server with a
// no-op tool (bench/mcp-sdk-server.mjs, shared with bench/mcp-bridge through bench/mcpShared.ts),
// both driven by the SDK's client in the same run. The calls go in alternating blocks so machine
// load hits both alike. Target: trellis p50 <= 1.2x the SDK server's.
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { SDK_SERVER, SDK_SERVER_TOOL, TRELLIS_CLI, log, makeSandbox, round3, summary } from '../mcpShared.ts';

const ROUNDS = 5;
const CALLS_PER_ROUND = 1000;
const BLOCK = 100;
const WARMUP = 300;

const sandbox = makeSandbox();
const { workspace, env } = sandbox;

async function connect(command: string, args: string[]): Promise<Client> {
  const client = new Client({ name: 'bench-mcp', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command, args, cwd: workspace, env, stderr: 'ignore' }));
  return client;
}

async function calls(client: Client, name: string, count: number, out: number[] | null): Promise<void> {
  for (let i = 0; i < count; i += 1) {
    const t0 = performance.now();
    const result = await client.callTool({ name, arguments: {} });
    const t1 = performance.now();
    if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result)}`);
    out?.push(t1 - t0);
  }
}

const trellis = await connect(process.execPath, [TRELLIS_CLI, 'serve']);
const peer = await connect(process.execPath, [SDK_SERVER]);
const TRELLIS_TOOL = 'builtin-tools__echo';
if (!(await trellis.listTools()).tools.some((t) => t.name === TRELLIS_TOOL))
  throw new Error(`trellis serve does not offer ${TRELLIS_TOOL}`);
await calls(trellis, TRELLIS_TOOL, WARMUP, null);
await calls(peer, SDK_SERVER_TOOL, WARMUP, null);

const samples = { trellis: [] as number[], sdk: [] as number[] };
for (let round = 0; round < ROUNDS; round += 1) {
  for (let start = 0; start < CALLS_PER_ROUND; start += BLOCK) {
    // Who goes first alternates per block.
    if ((start / BLOCK) % 2 === 0) {
      await calls(trellis, TRELLIS_TOOL, BLOCK, samples.trellis);
      await calls(peer, SDK_SERVER_TOOL, BLOCK, samples.sdk);
    } else {
      await calls(peer, SDK_SERVER_TOOL, BLOCK, samples.sdk);
      await calls(trellis, TRELLIS_TOOL, BLOCK, samples.trellis);
    }
  }
  log(`round ${round + 1}/${ROUNDS} done`);
}
await trellis.close();
await peer.close();
sandbox.remove();

const t = summary(samples.trellis);
const s = summary(samples.sdk);
const ratio = t.p50 / s.p50;
log(`trellis serve p50 ${t.p50.toFixed(4)} ms p99 ${t.p99.toFixed(4)} ms`);
log(`SDK server    p50 ${s.p50.toFixed(4)} ms p99 ${s.p99.toFixed(4)} ms`);
log(`trellis/SDK ${ratio.toFixed(3)}×`);
const result = {
  name: 'mcp',
  calls_each: ROUNDS * CALLS_PER_ROUND,
  trellis_p50_ms: round3(t.p50),
  trellis_p99_ms: round3(t.p99),
  sdk_p50_ms: round3(s.p50),
  sdk_p99_ms: round3(s.p99),
  ratio: round3(ratio),
  target: 'p50 of a no-op tool through trellis serve (stdio) <= 1.2x the SDK v2 minimal stdio server',
  pass: ratio <= 1.2,
};
process.stdout.write(`BENCH ${JSON.stringify(result)}\n`);
