import { createServer, request, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a {@link startRecordingProxy} passed on. */
export interface RecordedRequest {
  readonly method: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** A proxy on 127.0.0.1 in front of an HTTP server, recording every request it forwards. */
export interface RecordingProxy {
  /** The proxy's URL with `path` (default `/mcp`). */
  readonly url: string;
  /** Every request so far, in arrival order. */
  readonly seen: RecordedRequest[];
  /** Closes the proxy and every open connection. */
  close(): Promise<void>;
}

/**
 * Starts a proxy that forwards each request to `target` (its host and port) as it came, headers
 * included, and records it: what a client really sends, which the server's side cannot show.
 */
export async function startRecordingProxy(target: URL, path = '/mcp'): Promise<RecordingProxy> {
  const seen: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      seen.push({ method: req.method ?? '', headers: req.headers, body });
      const upstream = request(
        { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: { ...req.headers, host: target.host } },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', () => res.destroy());
      res.on('close', () => upstream.destroy());
      upstream.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
