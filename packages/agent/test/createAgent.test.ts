import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, ProviderError, ToolError } from '@trellis/sdk';
import { createAgent, type AgentEvent } from '../src/index.ts';
import { scriptedProvider, toolHost } from './helpers.ts';

const echo = defineTool({ name: 'echo', description: 'Returns its input.', input: z.object({ text: z.string() }), run: (input) => input });
const big = defineTool({ name: 'big', description: 'Returns a long text.', input: z.object({}), run: () => 'x'.repeat(5000) });
const fails = defineTool({
  name: 'fails',
  description: 'Always fails.',
  input: z.object({}),
  run: () => {
    throw new ToolError('TOOL_FAILED', 'the disk is on fire');
  },
});

async function drain(events: AsyncIterable<AgentEvent>): Promise<AgentEvent[]> {
  const out: AgentEvent[] = [];
  for await (const e of events) out.push(e);
  return out;
}

describe('the agent loop', () => {
  it('streams a plain answer and sums usage', async () => {
    const { catalog, runtime } = toolHost([echo]);
    const provider = scriptedProvider([{ text: ['Hel', 'lo'] }]);
    const session = createAgent({ provider, catalog, runtime, system: 'Be brief.' }).session();
    const turn = session.run('hi');
    const events = await drain(turn);
    expect(events.map((e) => e.type)).toEqual(['step_started', 'text', 'text', 'usage', 'turn_ended']);
    expect(await turn.result).toEqual({
      reply: 'Hello',
      finishReason: 'stop',
      steps: [],
      usage: { inputTokens: 10, outputTokens: 2, totalTokens: 12, cost: 0.001, requests: 1 },
      model: 'scripted/model',
    });
    expect(provider.requests[0]!.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'hi' },
    ]);
    expect(provider.requests[0]!.tools.map((t) => t.function.name)).toEqual(['t__echo']);
    expect(session.history()).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'Hello' },
    ]);
  });

  it('runs parallel tool calls at once and feeds results and errors back in the order asked', async () => {
    let waiting = 0;
    let release!: () => void;
    const both = new Promise<void>((resolve) => (release = resolve));
    const meet = defineTool({
      name: 'meet',
      description: 'Returns once two calls are running together.',
      input: z.object({ who: z.string() }),
      contract: { deadlineMs: 20_000 },
      run: async ({ who }) => {
        if (++waiting === 2) release();
        await both;
        return `met ${who}`;
      },
    });
    const { catalog, runtime } = toolHost([meet, fails]);
    const provider = scriptedProvider([
      {
        calls: [
          { name: 't__meet', args: { who: 'a' }, id: 'A' },
          { name: 't__meet', args: { who: 'b' }, id: 'B' },
          { name: 't__fails', args: {}, id: 'C' },
        ],
      },
      {
        calls: [
          { name: 't__nope', args: {}, id: 'D' },
          { name: 't__meet', args: '{"who":', id: 'E' },
        ],
      },
      { text: ['done'] },
    ]);
    const turn = createAgent({ provider, catalog, runtime }).session().run('go');
    const events = await drain(turn);
    const result = await turn.result;
    expect(result.reply).toBe('done');
    expect(result.steps.map((s) => [s.tool, s.ok, s.step, s.code])).toEqual([
      ['t.meet', true, 1, undefined],
      ['t.meet', true, 1, undefined],
      ['t.fails', false, 1, 'TOOL_FAILED'],
      ['t.nope', false, 2, 'TOOL_NOT_FOUND'],
      ['t.meet', false, 2, 'INPUT_INVALID'],
    ]);
    expect(events.filter((e) => e.type === 'tool_started').map((e) => e.type === 'tool_started' && [e.tool, e.args])).toEqual([
      ['t.meet', { who: 'a' }],
      ['t.meet', { who: 'b' }],
      ['t.fails', {}],
      ['t.nope', {}],
      ['t.meet', '{"who":'],
    ]);
    const second = provider.requests[1]!.messages;
    expect(second.slice(-3)).toEqual([
      { role: 'tool', toolCallId: 'A', content: 'met a' },
      { role: 'tool', toolCallId: 'B', content: 'met b' },
      { role: 'tool', toolCallId: 'C', content: JSON.stringify({ error: { code: 'TOOL_FAILED', message: 'the disk is on fire' } }) },
    ]);
    const third = provider.requests[2]!.messages.slice(-2);
    expect(third[0]).toMatchObject({ role: 'tool', toolCallId: 'D', content: expect.stringContaining('TOOL_NOT_FOUND') });
    expect(third[1]).toMatchObject({ role: 'tool', toolCallId: 'E', content: expect.stringContaining('not valid JSON') });
    const ended = events.filter((e) => e.type === 'tool_ended');
    expect(ended.every((e) => e.type === 'tool_ended' && typeof e.durationMs === 'number' && e.durationMs >= 0)).toBe(true);
  });

  it('caps tool output fed back to the model', async () => {
    const { catalog, runtime } = toolHost([big]);
    const provider = scriptedProvider([{ calls: [{ name: 't__big', args: {} }] }, { text: ['ok'] }]);
    await createAgent({ provider, catalog, runtime, maxToolOutputChars: 1000 }).session().run('go').result;
    const fed = provider.requests[1]!.messages.at(-1) as { content: string };
    expect(fed.content.length).toBe(1000);
    expect(fed.content).toMatch(/…\[cut: 4\d\d\d more characters; ask for less/);
  });

  it('stops at the step limit', async () => {
    const { catalog, runtime } = toolHost([echo]);
    const loop = { calls: [{ name: 't__echo', args: { text: 'again' } }], text: ['thinking'] };
    const provider = scriptedProvider([loop, loop, loop, loop]);
    const result = await createAgent({ provider, catalog, runtime, maxSteps: 3 }).session().run('go').result;
    expect([result.finishReason, result.reply, result.steps.length, result.usage.requests, provider.requests.length]).toEqual([
      'max_steps',
      'thinking',
      3,
      3,
      3,
    ]);
  });

  it('reports a provider failure as data and leaves the history as it was', async () => {
    const { catalog, runtime } = toolHost([echo]);
    const provider = scriptedProvider([
      { text: ['first'] },
      { calls: [{ name: 't__echo', args: { text: 'x' } }] },
      { error: new ProviderError('PROVIDER_PAYMENT_REQUIRED', 'add credits') },
    ]);
    const session = createAgent({ provider, catalog, runtime }).session();
    await session.run('one').result;
    const result = await session.run('two').result;
    expect([result.finishReason, result.error]).toEqual(['error', { code: 'PROVIDER_PAYMENT_REQUIRED', message: 'add credits' }]);
    expect(session.history()).toEqual([
      { role: 'user', content: 'one' },
      { role: 'assistant', content: 'first' },
    ]);
  });

  it('cancels the whole turn: the running tool call and the model request', async () => {
    const slow = defineTool({
      name: 'slow',
      description: 'Waits for its signal.',
      input: z.object({}),
      contract: { deadlineMs: 60_000 },
      run: (_, ctx) => new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(new Error('stopped')), { once: true })),
    });
    const { catalog, runtime } = toolHost([slow]);
    const provider = scriptedProvider([{ calls: [{ name: 't__slow', args: {} }] }, { text: ['partial'], hang: true }]);
    const session = createAgent({ provider, catalog, runtime }).session();
    const turn = session.run('go');
    for await (const e of turn) if (e.type === 'tool_started') turn.cancel();
    const result = await turn.result;
    expect([result.finishReason, result.error?.code, result.steps.map((s) => s.code)]).toEqual(['aborted', 'ABORTED', ['ABORTED']]);
    expect(session.history()).toEqual([]);

    const controller = new AbortController();
    const second = session.run('again', { signal: controller.signal });
    for await (const e of second) if (e.type === 'text') controller.abort();
    expect((await second.result).finishReason).toBe('aborted');
  });

  it('reads a provider function at the start of each turn: a swap applies to the next turn, not to one running', async () => {
    const { catalog, runtime } = toolHost([echo]);
    const before = {
      ...scriptedProvider([{ calls: [{ name: 't__echo', args: { text: 'x' } }] }, { text: ['old done'] }]),
      model: 'old/model',
    };
    const after = { ...scriptedProvider([{ text: ['new'] }]), model: 'new/model' };
    let current: typeof before = before;
    const agent = createAgent({ provider: () => current, catalog, runtime });
    expect(agent.model).toBe('old/model');
    const session = agent.session();
    const running = session.run('first');
    // Swapped while the first turn's tool call runs: its second model request still goes to the old provider.
    for await (const e of running) if (e.type === 'tool_started') current = after;
    const first = await running.result;
    const second = await session.run('second').result;
    expect([first.reply, first.model, second.reply, second.model, agent.model]).toEqual([
      'old done',
      'old/model',
      'new',
      'new/model',
      'new/model',
    ]);
    expect([before.requests.length, after.requests.length]).toEqual([2, 1]);
  });

  it('runs the turns of one session in order', async () => {
    const { catalog, runtime } = toolHost([echo]);
    const provider = scriptedProvider([{ text: ['a'] }, { text: ['b'] }]);
    const session = createAgent({ provider, catalog, runtime }).session();
    const [one, two] = [session.run('1'), session.run('2')];
    expect([(await two.result).reply, (await one.result).reply]).toEqual(['b', 'a']);
    expect(provider.requests[1]!.messages).toEqual([
      { role: 'user', content: '1' },
      { role: 'assistant', content: 'a' },
      { role: 'user', content: '2' },
    ]);
  });

  it('keeps the history bounded, cutting whole turns', async () => {
    const { catalog, runtime } = toolHost([echo]);
    const provider = scriptedProvider([
      { text: ['a'] },
      { calls: [{ name: 't__echo', args: { text: 'x' } }] },
      { text: ['b'] },
      { text: ['c'] },
    ]);
    const session = createAgent({ provider, catalog, runtime, historyLimit: 4 }).session();
    for (const p of ['1', '2', '3']) await session.run(p).result;
    expect(session.history().map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(session.history()[0]).toEqual({ role: 'user', content: '3' });
  });
});

describe('large catalogs', () => {
  const many = Array.from({ length: 30 }, (_, i) =>
    defineTool({
      name: `op_${i}`,
      description: i === 17 ? 'Converts temperatures between celsius and fahrenheit.' : `Operation number ${i} on widgets.`,
      input: z.object({}),
      run: () => `ran ${i}`,
    }),
  );

  it('shows the pinned tools plus find_tools, and loads what the model finds', async () => {
    const { catalog, runtime } = toolHost([...many, echo]);
    const provider = scriptedProvider([
      { calls: [{ name: 'find_tools', args: { query: 'celsius fahrenheit temperatures', limit: 2 } }] },
      { calls: [{ name: 't__op_17', args: {} }] },
      { text: ['It is warm.'] },
    ]);
    const agent = createAgent({ provider, catalog, runtime, toolBudget: { maxTools: 10 }, pinnedTools: ['t.echo', 't.op_1'] });
    const session = agent.session();
    expect(session.visibleTools()).toEqual({ tools: ['t.op_1', 't.echo'], largeCatalog: true });
    const turn = session.run('convert 20 C');
    const events = await drain(turn);
    expect(provider.requests[0]!.tools.map((t) => t.function.name)).toEqual(['t__op_1', 't__echo', 'find_tools']);
    expect(events.find((e) => e.type === 'tools_loaded')).toMatchObject({ tools: expect.arrayContaining(['t.op_17']) });
    expect(provider.requests[1]!.tools.map((t) => t.function.name)).toContain('t__op_17');
    expect((await turn.result).steps.map((s) => [s.tool, s.ok])).toEqual([
      ['find_tools', true],
      ['t.op_17', true],
    ]);
    session.reset();
    expect(session.visibleTools().tools).toEqual(['t.op_1', 't.echo']);
  });

  it('shows every tool when the catalog fits the budget, with no find_tools', async () => {
    const { catalog, runtime } = toolHost(many);
    const provider = scriptedProvider([{ text: ['ok'] }]);
    await createAgent({ provider, catalog, runtime }).session().run('hi').result;
    expect(provider.requests[0]!.tools).toHaveLength(30);
    expect(provider.requests[0]!.tools.some((t) => t.function.name === 'find_tools')).toBe(false);
  });

  it('switches to large-catalog mode on schema size alone', async () => {
    const { catalog, runtime } = toolHost(many);
    const provider = scriptedProvider([{ text: ['ok'] }]);
    await createAgent({ provider, catalog, runtime, toolBudget: { maxSchemaBytes: 2000 } })
      .session()
      .run('hi').result;
    expect(provider.requests[0]!.tools.map((t) => t.function.name)).toEqual(['find_tools']);
  });
});
