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
