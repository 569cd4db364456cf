// A local OpenAI-compatible chat-completions server for tests and benches: each POST
// /v1/chat/completions takes the next scripted reply. It speaks the wire format OpenRouter uses
// (SSE `data:` lines, `:` comment lines, a final usage chunk with `cost`, `data: [DONE]`), so the
// real `openai` client and the real openrouter plugin run against it unchanged.
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';

/** One scripted answer. */
export type FakeReply =
  /** A streamed assistant turn: text pieces, then tool calls (fragmented), then usage. */
  | {
      readonly kind: 'stream';
      readonly text?: readonly string[];
      readonly toolCalls?: ReadonlyArray<{ readonly name: string; readonly arguments: string; readonly id?: string }>;
      readonly usage?: { readonly prompt: number; readonly completion: number; readonly cost?: number };
      /** Sends OpenRouter's `: OPENROUTER PROCESSING` keep-alive comments between chunks. */
      readonly comments?: boolean;
      /** Waits this long before each chunk. */
      readonly chunkDelayMs?: number;
      /** Stops after the text and keeps the connection open until the client goes away. */
      readonly hang?: boolean;
      /** Sends nothing until this settles: a test holds a turn at its model request while it changes something. */
      readonly until?: Promise<unknown>;
    }
  /** A plain HTTP error answer. */
  | { readonly kind: 'status'; readonly status: number; readonly headers?: Readonly<Record<string, string>>; readonly message?: string }
  /** Streams the text, then an OpenRouter-style error chunk (`{"error": …}` with finish_reason "error"). */
  | { readonly kind: 'midstream-error'; readonly text?: readonly string[]; readonly message: string };

/** A request the server received. */
export interface FakeRequest {
  readonly headers: IncomingHttpHeaders;
  readonly body: {
    readonly model?: string;
    readonly messages: ReadonlyArray<Record<string, unknown>>;
    readonly tools?: ReadonlyArray<{ readonly function: { readonly name: string } }>;
    readonly [key: string]: unknown;
  };
  /** `performance.now()` when the body had arrived. */
  readonly receivedAt: number;
}

/** A running fake server. */
export interface FakeOpenAiServer {
  /** The base URL to give a client, ending in `/v1`. */
  readonly baseUrl: string;
  /** Every chat-completions request, in order. */
  readonly requests: FakeRequest[];
  /** Queues replies; each request takes the first. */
  script(...replies: FakeReply[]): void;
  /** Replies not yet taken. */
  pending(): number;
  /** Time spent inside the server's handler (body parsed → response ended), summed, in ms. */
  serverTimeMs(): number;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Starts the fake server on 127.0.0.1, port 0. */
export async function startFakeOpenAiServer(
  options: { readonly respond?: (request: FakeRequest) => FakeReply | undefined } = {},
): Promise<FakeOpenAiServer> {
  const queue: FakeReply[] = [];
  const requests: FakeRequest[] = [];
  let serverTime = 0;
  let sequence = 0;

  const server = createServer((req, res) => {
    void handle(req, res).catch(() => res.destroy());
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const start = performance.now();
    if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}` } }));
      return;
    }
    const request: FakeRequest = { headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')), receivedAt: start };
    requests.push(request);
    const reply = queue.shift() ?? options.respond?.(request);
    let waited = 0;
    try {
      if (reply === undefined) {
        res
          .writeHead(500, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { message: 'the fake server has no scripted reply left' } }));
        return;
      }
      if (reply.kind === 'status') {
        res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
        res.end(JSON.stringify({ error: { code: reply.status, message: reply.message ?? `scripted ${reply.status}` } }));
        return;
      }
      sequence += 1;
      const id = `gen-${sequence}`;
      const model = request.body.model ?? 'fake/model';
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
      const send = async (data: unknown, comment = false, delay = 0) => {
        if (delay > 0) {
          const t = performance.now();
          await sleep(delay);
          waited += performance.now() - t;
        }
        if (comment) res.write(': OPENROUTER PROCESSING\n\n');
        res.write(`data: ${JSON.stringify(data)}\n\n`);
      };
      const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
        id,
        object: 'chat.completion.chunk',
        created: 0,
        model,
        choices: [{ index: 0, delta, finish_reason: finish }],
      });
      if (reply.kind === 'stream' && reply.until !== undefined) {
        const t = performance.now();
        await reply.until;
        waited += performance.now() - t;
      }
      const delay = reply.kind === 'stream' ? (reply.chunkDelayMs ?? 0) : 0;
      const comments = reply.kind === 'stream' && reply.comments === true;
      await send(chunk({ role: 'assistant', content: '' }), comments, delay);
      for (const piece of reply.text ?? []) await send(chunk({ content: piece }), comments, delay);
      if (reply.kind === 'midstream-error') {
        await send({ ...chunk({ content: '' }, 'error'), error: { code: 502, message: reply.message } });
        res.end();
        return;
      }
      if (reply.hang === true) {
        await new Promise<void>((resolve) => res.once('close', resolve));
        return;
      }
      const calls = reply.toolCalls ?? [];
      for (const [index, call] of calls.entries()) {
        const callId = call.id ?? `call_${sequence}_${index}`;
        // Fragmented as real servers do: the name and the first half, then the rest of the arguments.
        const half = Math.floor(call.arguments.length / 2);
        await send(
          chunk({
            tool_calls: [{ index, id: callId, type: 'function', function: { name: call.name, arguments: call.arguments.slice(0, half) } }],
          }),
          comments,
          delay,
        );
        await send(chunk({ tool_calls: [{ index, function: { arguments: call.arguments.slice(half) } }] }), comments, delay);
      }
      await send(chunk({}, calls.length > 0 ? 'tool_calls' : 'stop'), comments, delay);
      const usage = reply.usage ?? { prompt: 10, completion: 5 };
      await send({
        id,
        object: 'chat.completion.chunk',
        created: 0,
        model,
        choices: [],
        usage: {
          prompt_tokens: usage.prompt,
          completion_tokens: usage.completion,
          total_tokens: usage.prompt + usage.completion,
          ...(usage.cost !== undefined ? { cost: usage.cost } : {}),
        },
      });
      res.end('data: [DONE]\n\n');
    } finally {
      serverTime += performance.now() - start - waited;
    }
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    script: (...replies) => void queue.push(...replies),
    pending: () => queue.length,
    serverTimeMs: () => serverTime,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
