// A Bot API server on 127.0.0.1 in front of the fake one (startFakeBotApiServer): it forwards every
// request, except those a test chooses to answer itself — never (a server that accepts and hangs),
// with a 429, or with something that is not a Bot API answer.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the proxy does with one request instead of forwarding it. */
export type Interception = { readonly kind: 'hang' } | { readonly kind: 'answer'; readonly status: number; readonly body: string };

export interface BotApiProxy {
  readonly apiRoot: string;
  /** Every method called, in order, forwarded or not. */
  readonly calls: string[];
  /** Requests held open right now (`hang`). */
  hanging(): number;
  close(): Promise<void>;
}

/**
 * Starts the proxy. `intercept` sees each request's method, JSON body and how many times that
 * method was called before (from 0); `undefined` forwards it to `target`.
 */
export async function startBotApiProxy(options: {
  readonly target: string;
  readonly intercept: (method: string, body: Record<string, unknown>, count: number) => Interception | undefined;
}): Promise<BotApiProxy> {
  const calls: string[] = [];
  const held = new Set<ServerResponse>();

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const method = /^\/bot[^/]+\/(\w+)/.exec(req.url ?? '')?.[1] ?? '';
    const count = calls.filter((c) => c === method).length;
    calls.push(method);
    const interception = options.intercept(method, text === '' ? {} : (JSON.parse(text) as Record<string, unknown>), count);
    if (interception?.kind === 'hang') {
      held.add(res);
      res.once('close', () => held.delete(res));
      return;
    }
    if (interception?.kind === 'answer') {
      res.writeHead(interception.status, { 'content-type': 'application/json' }).end(interception.body);
      return;
    }
    const upstream = new AbortController();
    res.once('close', () => upstream.abort());
    const answer = await fetch(`${options.target}${req.url ?? ''}`, {
      method: req.method ?? 'POST',
      headers: { 'content-type': req.headers['content-type'] ?? 'application/json' },
      ...(text === '' ? {} : { body: text }),
      signal: upstream.signal,
    });
    res.writeHead(answer.status, { 'content-type': 'application/json' }).end(await answer.text());
  }

  const server = createServer((req, res) => {
    void handle(req, res).catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    apiRoot: `http://127.0.0.1:${port}`,
    calls,
    hanging: () => held.size,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
