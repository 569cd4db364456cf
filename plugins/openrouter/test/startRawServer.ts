// A bare HTTP server on 127.0.0.1 for the answers @trellis/testing's fake server cannot script:
// echoed headers, non-stream bodies, malformed tool-call fragments, nonsense usage.
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A running raw server. */
export interface RawServer {
  /** The base URL to give the provider, ending in `/v1`. */
  readonly baseUrl: string;
  close(): Promise<void>;
}

/** Answers every request with `respond`; the request body is read first. */
export async function startRawServer(
  respond: (request: { headers: IncomingHttpHeaders }, res: ServerResponse) => void,
): Promise<RawServer> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => respond({ headers: req.headers }, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Writes an SSE answer: each item as one `data:` event, then `data: [DONE]`. */
export function sendSse(res: ServerResponse, events: readonly unknown[]): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  for (const event of events) res.write(`data: ${typeof event === 'string' ? event : JSON.stringify(event)}\n\n`);
  res.end('data: [DONE]\n\n');
}

/** One chat-completion chunk with a single choice. */
export function chunk(delta: Record<string, unknown>, finishReason: string | null = null): Record<string, unknown> {
  return {
    id: 'gen-raw',
    object: 'chat.completion.chunk',
    created: 0,
    model: 'test/model',
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  };
}
