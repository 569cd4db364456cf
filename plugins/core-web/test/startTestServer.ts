import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';

/** One request the test server saw. */
export interface SeenRequest {
  readonly path: string;
  readonly host: string | undefined;
  readonly userAgent: string | undefined;
  readonly remoteAddress: string | undefined;
}

/** A real HTTP server on 127.0.0.1 (and only there), with the routes the core-web tests need. */
export async function startTestServer(): Promise<{
  port: number;
  base: string;
  seen: SeenRequest[];
  openResponses: () => number;
  close: () => Promise<void>;
}> {
  const seen: SeenRequest[] = [];
  const open = new Set<ServerResponse>();
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    seen.push({
      path: url.pathname + url.search,
      host: req.headers.host,
      userAgent: req.headers['user-agent'],
      remoteAddress: req.socket.remoteAddress,
    });
    open.add(res);
    res.on('close', () => open.delete(res));
    switch (url.pathname) {
      case '/html':
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(
          '<!doctype html><html><head><title>T</title><script>alert("x")</script><style>p{}</style></head><body>' +
            '<h1>Hello <em>there</em></h1><p>Some <b>bold</b> text and <a href="/next">a link</a>.</p>' +
            '<ul><li>one</li><li>two</li></ul><pre>x = 1\n  y = 2</pre></body></html>',
        );
        return;
      case '/json':
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"a":1,"b":[true,null]}');
        return;
      case '/latin1':
        res.writeHead(200, { 'content-type': 'text/plain; charset=iso-8859-1' });
        res.end(Buffer.from([0x63, 0x61, 0x66, 0xe9]));
        return;
      case '/gzip':
        res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
        res.end(gzipSync('compressed hello'));
        return;
      case '/gzip-nul':
        res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
        res.end(gzipSync(Buffer.alloc(20 * 1024 * 1024, 0)));
        return;
      case '/gzip-bomb':
        res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
        res.end(gzipSync(Buffer.alloc(20 * 1024 * 1024, 0x61)));
        return;
      case '/compress':
        res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'compress' });
        res.end('LZW bytes');
        return;
      case '/untyped-text':
        res.writeHead(200, {});
        res.end('just words, no content type');
        return;
      case '/untyped-html':
        res.writeHead(200, {});
        res.end('<!DOCTYPE html><p>sniffed <b>page</b></p>');
        return;
      case '/untyped-binary':
        res.writeHead(200, {});
        res.end(Buffer.from([0x00, 0x01, 0x02, 0xff]));
        return;
      case '/binary':
        res.writeHead(200, { 'content-type': 'image/png', 'content-length': '5000' });
        res.end(Buffer.alloc(5000, 0x89));
        return;
      case '/missing':
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end('no such page');
        return;
      case '/host':
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end(`host=${req.headers.host ?? ''}`);
        return;
      case '/redirect':
        res.writeHead(302, { location: url.searchParams.get('to') ?? '/html' });
        res.end();
        return;
      case '/loop': {
        const n = Number(url.searchParams.get('n') ?? '0');
        res.writeHead(301, { location: `/loop?n=${n + 1}` });
        res.end();
        return;
      }
      case '/endless': {
        res.writeHead(200, { 'content-type': 'text/plain' });
        const chunk = Buffer.alloc(16 * 1024, 0x7a);
        const pump = () => {
          while (!res.destroyed && res.write(chunk));
          if (!res.destroyed) res.once('drain', pump);
        };
        pump();
        return;
      }
      case '/slow-body':
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('first part');
        return; // never ends
      case '/slow-headers':
        return; // never answers
      default:
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('ok');
    }
  };
  const server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    base: `http://127.0.0.1:${port}`,
    seen,
    openResponses: () => open.size,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of open) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
