import { getEventListeners } from 'node:events';
import type { ServerResponse } from 'node:http';
import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isProviderError, silentLogger, type ProviderEvent, type ProviderTool } from '@trellis/sdk';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '@trellis/testing';
import { OpenRouterSettingsSchema, plugin } from '../src/index.ts';
import { chunk, sendSse, startRawServer, type RawServer } from './startRawServer.ts';

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

describe('openrouter provider against endpoints that misbehave', () => {
  let raw: RawServer | undefined;
  afterEach(async () => {
    await raw?.close();
    raw = undefined;
  });

  /** Starts a raw server whose n-th request gets the n-th responder (the last one repeats). */
  async function rawProvider(
    responders: ReadonlyArray<Parameters<typeof startRawServer>[0]>,
    config: Record<string, unknown> = {},
    env?: Record<string, string>,
  ) {
    let served = 0;
    raw = await startRawServer((req, res) => responders[Math.min(served++, responders.length - 1)]!(req, res));
    return provider({ base_url: raw.baseUrl, ...config }, env);
  }

  it('ends a stream that stalls after its first chunk once timeout_seconds pass, naming the setting', { timeout: 5_000 }, async () => {
    server.script({ kind: 'stream', text: ['a'], hang: true });
    const p = await provider({ timeout_seconds: 0.3 });
    const seen: ProviderEvent[] = [];
    const started = performance.now();
    let caught: unknown;
    try {
      for await (const e of p.stream(request())) seen.push(e);
    } catch (error) {
      caught = error;
    }
    const elapsed = performance.now() - started;
    expect(seen).toEqual([{ type: 'text', delta: 'a' }]);
    expect(isProviderError(caught) && [caught.code, caught.message]).toEqual([
      'PROVIDER_FAILED',
      `${server.baseUrl} stopped sending its answer for longer than timeout_seconds = 0.3; raise [plugins.entries.openrouter.config] timeout_seconds if the model is that slow, or check the endpoint`,
    ]);
    expect(elapsed).toBeGreaterThanOrEqual(250);
    expect(elapsed).toBeLessThan(2_000);
  });

  it('ends a request whose endpoint sends the headers and then nothing, or not even the headers', { timeout: 5_000 }, async () => {
    const p = await rawProvider([(_req, res) => res.writeHead(200, { 'content-type': 'text/event-stream' }).flushHeaders(), () => {}], {
      timeout_seconds: 0.3,
      max_retries: 0,
    });
    expect(await failure(p.stream(request()))).toEqual({
      code: 'PROVIDER_FAILED',
      status: undefined,
      message: `${raw!.baseUrl} stopped sending its answer for longer than timeout_seconds = 0.3; raise [plugins.entries.openrouter.config] timeout_seconds if the model is that slow, or check the endpoint`,
    });
    expect(await failure(p.stream(request()))).toEqual({
      code: 'PROVIDER_FAILED',
      status: undefined,
      message: `${raw!.baseUrl} did not answer within timeout_seconds = 0.3 (after 0 retries); raise [plugins.entries.openrouter.config] timeout_seconds or check the endpoint`,
    });
  });

  it('ends a stream of chunks that bring nothing once timeout_seconds pass, but not one of reasoning', { timeout: 5_000 }, async () => {
    /** Sends `event` every 0.05 s, `times` times, then `last` and the end of the stream. */
    const drip =
      (event: unknown, times = Infinity, last?: unknown) =>
      (_req: unknown, res: ServerResponse) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        let sent = 0;
        const timer = setInterval(() => {
          if (sent++ < times) return void res.write(`data: ${JSON.stringify(event)}\n\n`);
          clearInterval(timer);
          res.end(`data: ${JSON.stringify(last)}\n\ndata: [DONE]\n\n`);
        }, 50);
        res.on('close', () => clearInterval(timer));
      };
    const p = await rawProvider(
      [drip({ choices: [] }), drip(chunk({ content: '', reasoning: 'thinking…' }), 20, chunk({ content: 'done' }, 'stop'))],
      { timeout_seconds: 0.6, max_retries: 0 },
    );
    const started = performance.now();
    expect(await failure(p.stream(request()))).toEqual({
      code: 'PROVIDER_FAILED',
      status: undefined,
      message: `${raw!.baseUrl} stopped sending its answer for longer than timeout_seconds = 0.6; raise [plugins.entries.openrouter.config] timeout_seconds if the model is that slow, or check the endpoint`,
    });
    expect(performance.now() - started).toBeLessThan(2_000);
    // Reasoning is the model at work: 1 s of it, 0.05 s apart, is not a stall (0.55 s of margin for a busy machine).
    expect(await collect(p.stream(request()))).toEqual([
      { type: 'text', delta: 'done' },
      { type: 'finish', reason: 'stop' },
    ]);
  });

  it('ends a stalled stream at once when the turn is aborted', { timeout: 5_000 }, async () => {
    server.script({ kind: 'stream', text: ['a'], hang: true });
    const p = await provider();
    const controller = new AbortController();
    const stream = p.stream(request(controller.signal))[Symbol.asyncIterator]();
    expect((await stream.next()).value).toEqual({ type: 'text', delta: 'a' });
    const started = performance.now();
    setTimeout(() => controller.abort(), 50);
    await expect(stream.next()).rejects.toMatchObject({ code: 'ABORTED' });
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it('fails at once when Retry-After asks for longer than it waits, saying so', { timeout: 5_000 }, async () => {
    server.script({ kind: 'status', status: 429, headers: { 'retry-after': '100000' } }, { kind: 'stream', text: ['never'] });
    const p = await provider({ max_retries: 2 });
    const started = performance.now();
    expect(await failure(p.stream(request()))).toEqual({
      code: 'PROVIDER_RATE_LIMITED',
      status: 429,
      message: `${server.baseUrl} is rate-limiting (HTTP 429: scripted 429) and asks to wait 100000 s before the next try (Retry-After), longer than the 10 s Trellis waits; try again later`,
    });
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(server.requests).toHaveLength(1);
  });

  it('honours retry-after-ms and cancels a retry wait when the turn is aborted', { timeout: 5_000 }, async () => {
    server.script({ kind: 'status', status: 503, headers: { 'retry-after-ms': '200' } }, { kind: 'stream', text: ['ok'] });
    const p = await provider({ max_retries: 1 });
    expect((await collect(p.stream(request())))[0]).toEqual({ type: 'text', delta: 'ok' });
    expect(server.requests[1]!.receivedAt - server.requests[0]!.receivedAt).toBeGreaterThanOrEqual(190);

    server.script({ kind: 'status', status: 503, headers: { 'retry-after': '5' } }, { kind: 'stream', text: ['never'] });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const started = performance.now();
    expect(await failure(p.stream(request(controller.signal)))).toMatchObject({ code: 'ABORTED' });
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(server.requests).toHaveLength(3);
  });

  it('keeps the API key out of errors when a 401 echoes it', async () => {
    const key = 'sk-or-v1-0123456789abcdef';
    const p = await rawProvider(
      [
        (req, res) =>
          res
            .writeHead(401, { 'content-type': 'application/json' })
            .end(
              JSON.stringify({ error: { message: `Invalid credentials ${req.headers.authorization} (${key.slice(0, 12)}… is ${key})` } }),
            ),
      ],
      {},
      { OPENROUTER_API_KEY: key },
    );
    let caught: unknown;
    try {
      await collect(p.stream(request()));
    } catch (error) {
      caught = error;
    }
    expect(isProviderError(caught) && [caught.code, caught.message]).toEqual([
      'PROVIDER_AUTH',
      `${raw!.baseUrl} refused the API key (HTTP 401: Invalid credentials Bearer [redacted] ([redacted]… is [redacted])); check OPENROUTER_API_KEY`,
    ]);
    expect(inspect(caught, { depth: 10 })).not.toContain(key);
  });

  it.each([
    {
      echo: 'all but its last character',
      status: 401,
      key: 'sk-or-v1-0123456789abcdef',
      error: (key: string) => ({ message: `bad key ${key.slice(0, -1)}…` }),
      says: 'refused the API key (HTTP 401: bad key [redacted]…); check OPENROUTER_API_KEY',
    },
    {
      echo: 'lower-cased',
      status: 401,
      key: 'sk-or-v1-ABCDEF0123456789XYZ',
      error: (key: string) => ({ message: `bad key ${key.toLowerCase()}` }),
      says: 'refused the API key (HTTP 401: bad key [redacted]); check OPENROUTER_API_KEY',
    },
    {
      echo: 'JSON-escaped (a key with " and \\)',
      status: 403,
      key: 'sk-or-v1-abc"def\\ghi0123456789',
      error: (key: string) => ({ message: { detail: `bad key ${key}` } }),
      says: 'refused the API key (HTTP 403: 403 {"detail":"bad key [redacted]"}); check OPENROUTER_API_KEY',
    },
    {
      echo: 'URL-encoded, in a 400',
      status: 400,
      key: 'sk-or-v1-abc"def\\ghi0123456789',
      error: (key: string) => ({ message: `unknown field api_key=${encodeURIComponent(key)}` }),
      says: 'answered HTTP 400: unknown field api_key=[redacted]',
    },
  ])('keeps the API key out of errors when the endpoint echoes it $echo', async ({ status, key, error, says }) => {
    const p = await rawProvider(
      [(_req, res) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: error(key) }))],
      { max_retries: 0 },
      { OPENROUTER_API_KEY: key },
    );
    const { message } = await failure(p.stream(request()));
    expect(message).toBe(`${raw!.baseUrl} ${says}`);
    // No run of 8 characters of the key is left, in any letter case or escaping.
    const text = message.toLowerCase();
    for (const form of [key, JSON.stringify(key).slice(1, -1), encodeURIComponent(key)]) {
      for (let at = 0; at + 8 <= form.length; at++) expect(text).not.toContain(form.slice(at, at + 8).toLowerCase());
    }
  });

  it('does not blank ordinary words a placeholder key for a local server happens to contain', async () => {
    const p = await rawProvider(
      [
        (_req, res) =>
          res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: "'messages' is required" } })),
      ],
      { max_retries: 0 },
      { OPENROUTER_API_KEY: 'sk-no-key-required' },
    );
    expect((await failure(p.stream(request()))).message).toBe(`${raw!.baseUrl} answered HTTP 400: 'messages' is required`);
  });

  it.each([
    ['a line break', 'sk-or-v1-secret\nX-Injected: 1', 'character 16 is a line break'],
    ['a trailing space', 'sk-or-v1-secret ', 'character 16 is a space'],
    ['a non-ASCII character', 'sk-or-v1-sécret', 'character 11 is not ASCII'],
  ])('refuses an OPENROUTER_API_KEY with %s, without printing it', async (_, key, where) => {
    let caught: unknown;
    try {
      await provider({}, { OPENROUTER_API_KEY: key });
    } catch (error) {
      caught = error;
    }
    expect(isProviderError(caught) && [caught.code, caught.message]).toEqual([
      'PROVIDER_UNAVAILABLE',
      `OPENROUTER_API_KEY cannot be sent in an HTTP header: ${where}; set it to the key alone, without spaces or line breaks`,
    ]);
    expect(inspect(caught)).not.toContain('secret');
  });

  it.each([
    ['an HTML page', 'text/html', '<html><body>Welcome to nginx</body></html>'],
    [
      'a completion that is not streamed',
      'application/json',
      JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content: 'hi' } }] }),
    ],
    ['an event stream without any choice', 'text/event-stream', 'data: {}\n\ndata: {"choices":[]}\n\ndata: [DONE]\n\n'],
  ])('reports %s on HTTP 200 as PROVIDER_PROTOCOL naming base_url', async (_, type, body) => {
    const p = await rawProvider([(_req, res) => res.writeHead(200, { 'content-type': type }).end(body)]);
    expect(await failure(p.stream(request()))).toEqual({
      code: 'PROVIDER_PROTOCOL',
      status: 200,
      message: `${raw!.baseUrl} did not answer as an OpenAI-compatible chat-completions stream (HTTP 200, content-type ${type}, no choice and no finish_reason); check [plugins.entries.openrouter.config] base_url: it should be the endpoint's /v1 URL`,
    });
  });

  it('removes its abort listener from the turn signal after every request', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => void warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const controller = new AbortController();
      const p = await provider({ max_retries: 10 });
      for (let step = 0; step < 12; step += 1) {
        server.script({ kind: 'stream', text: ['ok'] });
        await collect(p.stream(request(controller.signal)));
      }
      // Eleven tries of one request, each adding a listener to that request's own signal.
      server.script(...Array.from({ length: 11 }, () => ({ kind: 'status' as const, status: 503, headers: { 'retry-after': '0' } })));
      expect(await failure(p.stream(request(controller.signal)))).toMatchObject({ code: 'PROVIDER_FAILED', status: 503 });
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.map((w) => w.name)).toEqual([]);
      expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('keeps tool calls apart when fragments carry ids instead of indexes, or every call has index 0', async () => {
    const echo = (id: string | undefined, args: string, index?: number) =>
      chunk({
        tool_calls: [
          {
            ...(index !== undefined ? { index } : {}),
            ...(id !== undefined
              ? { id, type: 'function', function: { name: 'builtin-tools__echo', arguments: args } }
              : { function: { arguments: args } }),
          },
        ],
      });
    const p = await rawProvider([
      (_req, res) => sendSse(res, [echo('a', '{"text":'), echo(undefined, '"one"}'), echo('b', '{"text":"two"}'), chunk({}, 'tool_calls')]),
      (_req, res) =>
        sendSse(res, [echo('a', '{"text":', 0), echo(undefined, '"one"}', 0), echo('b', '{"text":"two"}', 0), chunk({}, 'tool_calls')]),
    ]);
    const expected = [
      { type: 'tool_call', call: { id: 'a', name: 'builtin-tools__echo', arguments: '{"text":"one"}' } },
      { type: 'tool_call', call: { id: 'b', name: 'builtin-tools__echo', arguments: '{"text":"two"}' } },
      { type: 'finish', reason: 'tool_calls' },
    ];
    expect(await collect(p.stream(request()))).toEqual(expected);
    expect(await collect(p.stream(request()))).toEqual(expected);
  });

  it('refuses two tool calls with the same id, and a fragment that belongs to no call', async () => {
    const call = (index: number | undefined, id: string | undefined) =>
      chunk({
        tool_calls: [
          {
            ...(index !== undefined ? { index } : {}),
            ...(id !== undefined ? { id } : {}),
            function: { name: 'builtin-tools__echo', arguments: '{}' },
          },
        ],
      });
    const p = await rawProvider([
      (_req, res) => sendSse(res, [call(0, 'same'), call(1, 'same'), chunk({}, 'tool_calls')]),
      (_req, res) => sendSse(res, [call(undefined, undefined), chunk({}, 'tool_calls')]),
    ]);
    expect(await failure(p.stream(request()))).toEqual({
      code: 'PROVIDER_PROTOCOL',
      status: undefined,
      message: `${raw!.baseUrl} streamed two tool calls with the id "same"; the model or endpoint is broken, try another model`,
    });
    expect(await failure(p.stream(request()))).toEqual({
      code: 'PROVIDER_PROTOCOL',
      status: undefined,
      message: `${raw!.baseUrl} streamed a tool-call fragment with neither an index nor an id before any tool call; the model or endpoint is broken, try another model`,
    });
  });

  it('ignores usage numbers that are not finite and non-negative', async () => {
    const p = await rawProvider([
      (_req, res) =>
        sendSse(res, [
          chunk({ content: 'hi' }, 'stop'),
          '{"choices":[],"usage":{"prompt_tokens":-5,"completion_tokens":7,"total_tokens":1e400,"cost":-1}}',
        ]),
    ]);
    expect(await collect(p.stream(request()))).toEqual([
      { type: 'text', delta: 'hi' },
      { type: 'usage', usage: { inputTokens: 0, outputTokens: 7, totalTokens: 7 } },
      { type: 'finish', reason: 'stop' },
    ]);
  });
});
