import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isProviderError, silentLogger, type ProviderEvent, type ProviderTool } from '@trellis/sdk';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '@trellis/testing';
import { OpenRouterSettingsSchema, plugin } from '../src/index.ts';

let server: FakeOpenAiServer;
beforeEach(async () => {
  server = await startFakeOpenAiServer();
});
afterEach(() => server.close());

const TOOLS: ProviderTool[] = [
  { type: 'function', function: { name: 'builtin-tools__echo', description: 'Echo', parameters: { type: 'object' } } },
];

async function provider(config: Record<string, unknown> = {}, env: Record<string, string> = { OPENROUTER_API_KEY: 'sk-test' }) {
  return plugin.provider!.create({
    config: OpenRouterSettingsSchema.parse({ base_url: server.baseUrl, model: 'test/model', ...config }),
    logger: silentLogger,
    workspace: { root: '/' },
    env,
  });
}

async function collect(stream: AsyncIterable<ProviderEvent>): Promise<ProviderEvent[]> {
  const events: ProviderEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

async function failure(stream: AsyncIterable<ProviderEvent>): Promise<{ code: string; message: string; status: number | undefined }> {
  try {
    await collect(stream);
  } catch (error) {
    if (isProviderError(error)) return { code: error.code, message: error.message, status: error.status };
    throw error;
  }
  throw new Error('the stream did not fail');
}

const request = (signal = new AbortController().signal) => ({ messages: [{ role: 'user' as const, content: 'hi' }], tools: TOOLS, signal });

describe('openrouter provider against an OpenAI-compatible server', () => {
  it('streams text through comment lines, reports usage with cost, and sends the key and attribution headers', async () => {
    server.script({ kind: 'stream', text: ['Hel', 'lo'], comments: true, usage: { prompt: 12, completion: 3, cost: 0.0042 } });
    const p = await provider({ temperature: 0.2, max_tokens: 99, headers: { 'X-Extra': 'yes' } });
    expect(await collect(p.stream(request()))).toEqual([
      { type: 'text', delta: 'Hel' },
      { type: 'text', delta: 'lo' },
      { type: 'usage', usage: { inputTokens: 12, outputTokens: 3, totalTokens: 15, cost: 0.0042 } },
      { type: 'finish', reason: 'stop' },
    ]);
    const [sent] = server.requests;
    expect(sent!.headers.authorization).toBe('Bearer sk-test');
    expect(sent!.headers['http-referer']).toBe('https://github.com/trellis');
    expect(sent!.headers['x-openrouter-title']).toBe('Trellis');
    expect(sent!.headers['x-extra']).toBe('yes');
    expect(sent!.body).toMatchObject({
      model: 'test/model',
      stream: true,
      temperature: 0.2,
      max_tokens: 99,
      tools: TOOLS,
      stream_options: { include_usage: true },
    });
  });

  it('assembles fragmented parallel tool calls and sends tool results back in the OpenAI shape', async () => {
    server.script({
      kind: 'stream',
      toolCalls: [
        { name: 'builtin-tools__echo', arguments: '{"text":"one"}', id: 'c1' },
        { name: 'builtin-tools__echo', arguments: '{"text":"two"}', id: 'c2' },
      ],
    });
    const p = await provider();
    const events = await collect(p.stream(request()));
    expect(events.filter((e) => e.type === 'tool_call' || e.type === 'finish')).toEqual([
      { type: 'tool_call', call: { id: 'c1', name: 'builtin-tools__echo', arguments: '{"text":"one"}' } },
      { type: 'tool_call', call: { id: 'c2', name: 'builtin-tools__echo', arguments: '{"text":"two"}' } },
      { type: 'finish', reason: 'tool_calls' },
    ]);
    server.script({ kind: 'stream', text: ['done'] });
    await collect(
      p.stream({
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'builtin-tools__echo', arguments: '{"text":"one"}' }] },
          { role: 'tool', toolCallId: 'c1', content: '{"text":"one"}' },
        ],
        tools: TOOLS,
        signal: new AbortController().signal,
      }),
    );
    expect(server.requests[1]!.body.messages).toEqual([
      { role: 'user', content: 'hi' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'builtin-tools__echo', arguments: '{"text":"one"}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: '{"text":"one"}' },
    ]);
  });

  it('retries a 429 after its Retry-After and then succeeds', async () => {
    server.script({ kind: 'status', status: 429, headers: { 'retry-after': '1' } }, { kind: 'stream', text: ['ok'] });
    const p = await provider({ max_retries: 2 });
    const started = performance.now();
    const events = await collect(p.stream(request()));
    expect(events[0]).toEqual({ type: 'text', delta: 'ok' });
    expect(server.requests).toHaveLength(2);
    // Retry-After: 1 means the second request cannot come sooner than a second later.
    expect(server.requests[1]!.receivedAt - started).toBeGreaterThanOrEqual(950);
  });

  it('gives up on 429 after max_retries with PROVIDER_RATE_LIMITED', async () => {
    server.script(
      { kind: 'status', status: 429, headers: { 'retry-after': '0' } },
      { kind: 'status', status: 429, headers: { 'retry-after': '0' } },
    );
    const p = await provider({ max_retries: 1 });
    expect(await failure(p.stream(request()))).toMatchObject({ code: 'PROVIDER_RATE_LIMITED', status: 429 });
    expect(server.requests).toHaveLength(2);
  });

  it('retries a 503 and never retries a 402', async () => {
    server.script({ kind: 'status', status: 503, headers: { 'retry-after': '0' } }, { kind: 'stream', text: ['back'] });
    const p = await provider({ max_retries: 3 });
    expect((await collect(p.stream(request())))[0]).toEqual({ type: 'text', delta: 'back' });
    expect(server.requests).toHaveLength(2);

    server.script({ kind: 'status', status: 402, message: 'Insufficient credits' }, { kind: 'stream', text: ['never'] });
    const f = await failure(p.stream(request()));
    expect(f.code).toBe('PROVIDER_PAYMENT_REQUIRED');
    expect(f.message).toContain('Insufficient credits');
    expect(server.requests).toHaveLength(3);
    expect(server.pending()).toBe(1);
  });

  it('turns a mid-stream error event into PROVIDER_FAILED after the text that came before it', async () => {
    server.script({ kind: 'midstream-error', text: ['partial'], message: 'Provider disconnected' });
    const p = await provider();
    const seen: ProviderEvent[] = [];
    let caught: unknown;
    try {
      for await (const e of p.stream(request())) seen.push(e);
    } catch (error) {
      caught = error;
    }
    expect(seen).toEqual([{ type: 'text', delta: 'partial' }]);
    expect(isProviderError(caught) && [caught.code, caught.message]).toEqual([
      'PROVIDER_FAILED',
      `${server.baseUrl} reported an error mid-stream: Provider disconnected`,
    ]);
  });

  it('names the key on 401 and stops at once when aborted', async () => {
    server.script({ kind: 'status', status: 401, message: 'No auth credentials found' });
    const p = await provider();
    expect(await failure(p.stream(request()))).toMatchObject({
      code: 'PROVIDER_AUTH',
      message: expect.stringContaining('OPENROUTER_API_KEY'),
    });

    server.script({ kind: 'stream', text: ['a'], hang: true });
    const controller = new AbortController();
    const stream = p.stream(request(controller.signal))[Symbol.asyncIterator]();
    expect((await stream.next()).value).toEqual({ type: 'text', delta: 'a' });
    controller.abort();
    await expect(stream.next()).rejects.toMatchObject({ code: 'ABORTED' });
  });

  it('refuses to start without OPENROUTER_API_KEY, saying how to use a local server', async () => {
    await expect(provider({}, {})).rejects.toMatchObject({
      code: 'PROVIDER_UNAVAILABLE',
      message: expect.stringMatching(/OPENROUTER_API_KEY.*base_url/),
    });
  });

  it('reports an unreachable base_url as PROVIDER_FAILED naming it', async () => {
    const url = server.baseUrl;
    await server.close();
    const p = await provider({ base_url: url, max_retries: 0 });
    expect(await failure(p.stream(request()))).toMatchObject({
      code: 'PROVIDER_FAILED',
      message: expect.stringContaining(`cannot reach ${url}`),
    });
    server = await startFakeOpenAiServer();
  });
});
