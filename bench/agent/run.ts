// bench/agent: what the agent loop adds per step. A scripted turn of 10 model requests (9 with a
// tool call, then the answer) against the local OpenAI-compatible server, driven by (a) the agent
// loop with the real openrouter provider, catalog and ToolRuntime, and (b) a plain `openai` client
// loop doing the same requests and calling the same tool function directly. Each side's time minus
// the time spent inside the server's handler is its loop time. Both loops pay the same HTTP client
// floor (the openai client, undici, SSE parsing), which on a loaded machine alone is several ms per
// request, so the target is on what the agent loop adds over the plain loop: ≤ 1 ms per step.
// Turns are interleaved so drift and GC hit both alike; medians over the turns.
import { performance } from 'node:perf_hooks';
import { OpenAI } from 'openai';
import { createAgent } from '@trellis/agent';
import { createOpenRouterProvider, OpenRouterSettingsSchema } from '@trellis/plugin-openrouter';
import { definePlugin, defineTool, resolveContract } from '@trellis/sdk';
import { type BundledPluginDescriptor } from '@trellis/sdk/internal';
import { toolJsonSchema } from '@trellis/sdk/schema';
import { startFakeOpenAiServer, type FakeReply } from '@trellis/testing';
import { z } from 'zod';
import { BENCH_MANIFEST, benchRuntime } from '../benchRuntime.ts';

const STEPS = 10;
const TURNS = 60;
const WARMUP = 8;

const echo = defineTool({
  name: 'echo',
  description: 'Returns its input.',
  input: z.object({ text: z.string().max(100) }),
  run: (input) => input,
});
const descriptor: BundledPluginDescriptor = {
  packageName: '@trellis/plugin-bench',
  manifest: BENCH_MANIFEST,
  tools: [
    {
      name: 'echo',
      description: echo.description,
      inputSchema: toolJsonSchema(echo.input),
      tags: [],
      examples: [],
      contract: resolveContract({}),
    },
  ],
  load: async () => definePlugin({ manifest: { id: 'bench' }, tools: [echo] }),
};
const { catalog, runtime } = benchRuntime(descriptor);

const script = (): FakeReply[] => [
  ...Array.from({ length: STEPS - 1 }, (_, i): FakeReply => ({
    kind: 'stream',
    text: [`step ${i} `],
    toolCalls: [{ name: 'bench__echo', arguments: `{"text":"call ${i}"}` }],
  })),
  { kind: 'stream', text: ['all ', 'done'] },
];
const server = await startFakeOpenAiServer();
const settings = OpenRouterSettingsSchema.parse({ base_url: server.baseUrl, model: 'bench/model', max_retries: 0 });
const agent = createAgent({ provider: createOpenRouterProvider({ settings, apiKey: 'bench' }), catalog, runtime });

async function agentTurn(): Promise<{ total: number; server: number }> {
  server.script(...script());
  const serverBefore = server.serverTimeMs();
  const t0 = performance.now();
  const turn = agent.session().run('go');
  for await (const event of turn) void event;
  const result = await turn.result;
  const total = performance.now() - t0;
  if (result.reply !== 'all done' || result.steps.length !== STEPS - 1 || !result.steps.every((s) => s.ok))
    throw new Error(`the agent turn went wrong: ${JSON.stringify(result)}`);
  return { total, server: server.serverTimeMs() - serverBefore };
}

// The plain loop: the same requests through the same client library, the tool called directly.
const client = new OpenAI({ apiKey: 'bench', baseURL: server.baseUrl, maxRetries: 0, logLevel: 'off' });
const tools = catalog.render('openai') as OpenAI.Chat.Completions.ChatCompletionTool[];
async function plainTurn(): Promise<{ total: number; server: number }> {
  server.script(...script());
  const serverBefore = server.serverTimeMs();
  const t0 = performance.now();
  const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: 'user', content: 'go' }];
  let reply = '';
  for (let step = 0; step < STEPS; step++) {
    const stream = await client.chat.completions.create({
      model: 'bench/model',
      messages,
      tools,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    const calls = new Map<number, { id: string; name: string; arguments: string }>();
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta;
      if (delta?.content) text += delta.content;
      for (const f of delta?.tool_calls ?? []) {
        const c = calls.get(f.index) ?? { id: '', name: '', arguments: '' };
        if (f.id) c.id = f.id;
        if (f.function?.name) c.name += f.function.name;
        if (f.function?.arguments) c.arguments += f.function.arguments;
        calls.set(f.index, c);
      }
    }
    if (calls.size === 0) {
      reply = text;
      break;
    }
    const list = [...calls.values()];
    messages.push({
      role: 'assistant',
      content: text,
      tool_calls: list.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })),
    });
    for (const c of list) {
      const value = await echo.run(JSON.parse(c.arguments), undefined as never);
      messages.push({ role: 'tool', tool_call_id: c.id, content: JSON.stringify(value) });
    }
  }
  const total = performance.now() - t0;
  if (reply !== 'all done') throw new Error(`the plain turn went wrong: ${reply}`);
  return { total, server: server.serverTimeMs() - serverBefore };
}

console.error(`warming up (${WARMUP} turns each)…`);
for (let i = 0; i < WARMUP; i++) {
  await agentTurn();
  await plainTurn();
}
const agentLoop: number[] = [];
const plainLoop: number[] = [];
const agentTotal: number[] = [];
const added: number[] = [];
const serverTimes: number[] = [];
for (let i = 0; i < TURNS; i++) {
  const a = await agentTurn();
  const p = await plainTurn();
  agentLoop.push((a.total - a.server) / STEPS);
  plainLoop.push((p.total - p.server) / STEPS);
  // Paired: each round's agent turn minus its plain turn, so load swings cancel out.
  added.push((a.total - a.server - (p.total - p.server)) / STEPS);
  agentTotal.push(a.total);
  serverTimes.push(a.server);
}
await server.close();
await runtime.dispose();

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const r3 = (x: number) => Math.round(x * 1000) / 1000;
const agentPerStep = median(agentLoop);
const plainPerStep = median(plainLoop);
console.error(
  `agent loop         ${r3(agentPerStep)} ms/step outside the server  (turn ${r3(median(agentTotal))} ms, server ${r3(median(serverTimes))} ms, ${TURNS} turns)`,
);
console.error(`plain openai loop  ${r3(plainPerStep)} ms/step outside the server`);
const addedPerStep = median(added);
console.error(`agent − plain      ${r3(addedPerStep)} ms/step (median of the paired rounds)`);
const pass = addedPerStep <= 1;
console.log(
  `BENCH ${JSON.stringify({
    name: 'agent',
    steps: STEPS,
    agent_loop_ms_per_step: r3(agentPerStep),
    plain_openai_loop_ms_per_step: r3(plainPerStep),
    added_ms_per_step: r3(addedPerStep),
    median_ms: r3(median(agentTotal)),
    ratio: Math.round((agentPerStep / plainPerStep) * 100) / 100,
    target: 'agent loop minus server time, over the plain openai loop minus server time: <= 1 ms per step (10-step turn, local server)',
    pass,
  })}`,
);
