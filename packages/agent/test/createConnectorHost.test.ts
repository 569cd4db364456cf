import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, ProviderError, type ReplyEvent } from '@trellis/sdk';
import { createAgent, createConnectorHost } from '../src/index.ts';
import { scriptedProvider, toolHost } from './helpers.ts';

const echo = defineTool({ name: 'echo', description: 'Returns its input.', input: z.object({ text: z.string() }), run: (input) => input });

async function reply(events: AsyncIterable<ReplyEvent>): Promise<ReplyEvent[]> {
  const out: ReplyEvent[] = [];
  for await (const e of events) out.push(e);
  return out;
}

describe('createConnectorHost', () => {
  it('keeps one history per conversation, streams the reply, and forgets on reset', async () => {
    const { catalog, runtime } = toolHost([echo]);
    const provider = scriptedProvider([
      { calls: [{ name: 't__echo', args: { text: 'x' } }] },
      { text: ['one'] },
      { text: ['two'] },
      { text: ['three'] },
    ]);
    const host = createConnectorHost({ agent: createAgent({ provider, catalog, runtime }) });
    expect(await reply(host.handle({ conversationId: '1', text: 'a' }))).toEqual([
      { type: 'tool_started', tool: 't.echo' },
      { type: 'tool_ended', tool: 't.echo', ok: true, durationMs: expect.any(Number) },
      { type: 'text', delta: 'one' },
      { type: 'done', reply: 'one' },
    ]);
    await reply(host.handle({ conversationId: '2', text: 'b' }));
    expect(provider.requests[2]!.messages).toEqual([{ role: 'user', content: 'b' }]);
    host.reset('1');
    await reply(host.handle({ conversationId: '1', text: 'c' }));
    expect(provider.requests[3]!.messages).toEqual([{ role: 'user', content: 'c' }]);
  });

  it('ends a failed turn with done + error, and cancels running turns on request', async () => {
    const { catalog, runtime } = toolHost([echo]);
    const provider = scriptedProvider([{ error: new ProviderError('PROVIDER_FAILED', 'boom') }, { text: ['slow'], hang: true }]);
    const host = createConnectorHost({ agent: createAgent({ provider, catalog, runtime }) });
    expect(await reply(host.handle({ conversationId: '1', text: 'a' }))).toEqual([
      { type: 'done', reply: '', error: { code: 'PROVIDER_FAILED', message: 'boom' } },
    ]);
    const running = reply(host.handle({ conversationId: '1', text: 'b' }));
    await new Promise((r) => setTimeout(r, 10));
    expect(host.running()).toBe(1);
    host.cancelAll();
    expect((await running).at(-1)).toMatchObject({ type: 'done', error: { code: 'ABORTED' } });
    await host.idle();
    expect(host.running()).toBe(0);
  });
});

describe('createConnectorHost at shutdown', () => {
  it('once closed starts no turn: waiting and later messages end at once as not answered, the running turn goes on', async () => {
    const { catalog, runtime } = toolHost([echo]);
    const provider = scriptedProvider([{ text: ['slow'], hang: true }]);
    const logs: Array<{ message: string; fields?: Readonly<Record<string, unknown>> }> = [];
    const log = (message: string, fields?: Readonly<Record<string, unknown>>) => void logs.push({ message, ...(fields ? { fields } : {}) });
    const host = createConnectorHost({
      agent: createAgent({ provider, catalog, runtime }),
      logger: { debug: log, info: log, warn: log, error: log },
    });
    const running = reply(host.handle({ conversationId: '1', text: 'a' }));
    const waiting = reply(host.handle({ conversationId: '1', text: 'b' }));
    await new Promise((r) => setTimeout(r, 20));
    expect([host.running(), host.waiting()]).toEqual([1, 1]);
    host.close();
    const notAnswered = { type: 'done', reply: '', error: { code: 'ABORTED', message: 'not answered: the host is closing' } };
    expect(await waiting).toEqual([notAnswered]);
    expect(await reply(host.handle({ conversationId: '2', text: 'c' }))).toEqual([notAnswered]);
    expect(host.running()).toBe(1);
    host.cancelAll();
    expect((await running).at(-1)).toMatchObject({ type: 'done', error: { code: 'ABORTED', message: 'the turn was cancelled' } });
    await host.idle();
    // Only the running turn ever reached the model.
    expect(provider.requests).toHaveLength(1);
    expect(logs.filter((l) => l.message.startsWith('not answered')).map((l) => l.fields)).toEqual([
      { conversation: '1' },
      { conversation: '2' },
    ]);
  });

  it('says in the reply when a turn stopped at the step limit', async () => {
    const { catalog, runtime } = toolHost([echo]);
    const provider = scriptedProvider([{ text: ['Checking.'], calls: [{ name: 't__echo', args: { text: 'x' } }] }]);
    const host = createConnectorHost({ agent: createAgent({ provider, catalog, runtime, maxSteps: 1 }) });
    expect((await reply(host.handle({ conversationId: '1', text: 'a' }))).at(-1)).toEqual({
      type: 'done',
      reply: 'Checking.\n\n(I stopped before finishing: this answer reached the limit on steps. Ask me to continue.)',
    });
  });
});
