import { timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isIP } from 'node:net';
import { createMcpHandler } from '@modelcontextprotocol/server';
import { hostHeaderValidation, originValidation, toNodeHandler } from '@modelcontextprotocol/node';
import type { TrellisMcpServer } from './createTrellisMcpServer.ts';
import { httpRequestSignal } from './httpRequestSignal.ts';

/** Options of {@link serveMcpHttp}. */
export interface ServeMcpHttpOptions {
  /** Address to bind; default `127.0.0.1`. */
  readonly host?: string;
  /** Port; default 0 (any free port). */
  readonly port?: number;
  /** The endpoint path; default `/mcp`. */
  readonly path?: string;
  /**
   * Bearer token every request must carry; undefined serves without auth (loopback only: the
   * caller checks). A function is asked at every request, so a host whose config reloads can
   * rotate the token: the old one is refused from the next request on.
   */
  readonly token?: string | (() => string);
  /** Extra browser origins (hostnames) allowed besides loopback; a request with another `Origin` gets 403. A function is asked at every request. */
  readonly allowedOrigins?: readonly string[] | (() => readonly string[]);
  /** Out-of-band errors (reporting only). */
  readonly onerror?: (error: Error) => void;
  /** Interval of the SSE streams' keep-alive comments, in ms; the SDK's default (15 000) when absent, 0 = none. */
  readonly keepAliveMs?: number;
}

/** A listening Streamable HTTP server. */
export interface McpHttpServing {
  /** The endpoint, e.g. `http://127.0.0.1:41234/mcp`. */
  readonly url: string;
  readonly port: number;
  /**
   * Ends every open request (a `subscriptions/listen` stream, a long call, which is cancelled)
   * whose bearer token is no longer the one in force, so a rotated-out token loses what it had
   * open, not only what it asks next. Returns how many were ended. Call it after the `token`
   * function's answer changed.
   */
  reauthorize(): number;
  close(): Promise<void>;
}

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];

/** True for a loopback bind address (`127.0.0.0/8`, `::1`, `localhost`). */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  if (bare === 'localhost' || bare === '::1') return true;
  return isIP(bare) === 4 && bare.startsWith('127.');
}

/**
 * Serves MCP over Streamable HTTP with the SDK's `createMcpHandler` (2026-07-28 per-request
 * serving, and stateless serving for 2025-era clients), in this order per request: the path;
 * `Host` (on a loopback bind: only loopback names, against DNS rebinding) and `Origin` (browsers
 * only from loopback or `allowedOrigins`), 403 otherwise; the bearer token, 401 otherwise; then
 * the SDK, which checks the MCP headers itself. `tools/list_changed` reaches 2026-07-28 clients
 * through `subscriptions/listen`; 2025-era stateless serving has no stream to carry it.
 */
export async function serveMcpHttp(server: TrellisMcpServer, options: ServeMcpHttpOptions = {}): Promise<McpHttpServing> {
  const host = options.host ?? '127.0.0.1';
  const path = options.path ?? '/mcp';
  const loopback = isLoopbackHost(host);
  const handler = createMcpHandler(server.factory, {
    legacy: 'stateless',
    ...(options.keepAliveMs !== undefined ? { keepAliveMs: options.keepAliveMs } : {}),
    ...(options.onerror !== undefined ? { onerror: options.onerror } : {}),
  });
  const unsubscribe = server.onToolsChanged(() => handler.notify.toolsChanged());
  const serveNode = toNodeHandler(handler, options.onerror !== undefined ? { onerror: options.onerror } : {});
  const bareHost = isIP(host) === 6 ? `[${host}]` : host;
  const checkHost = loopback ? hostHeaderValidation([...new Set([...LOOPBACK_NAMES, bareHost])]) : undefined;
  // The Origin check for the allowed list in force; made again only when the list changes.
  let origins: { readonly list: readonly string[] | undefined; readonly check: ReturnType<typeof originValidation> } | undefined;
  const checkOrigin = (req: IncomingMessage, res: ServerResponse): boolean => {
    const list = typeof options.allowedOrigins === 'function' ? options.allowedOrigins() : options.allowedOrigins;
    if (origins === undefined || origins.list !== list)
      origins = { list, check: originValidation([...new Set([...LOOPBACK_NAMES, ...(loopback ? [] : [bareHost]), ...(list ?? [])])]) };
    return origins.check(req, res);
  };
  const expectedHeader = (): Buffer | undefined => {
    const token = typeof options.token === 'function' ? options.token() : options.token;
    return token === undefined ? undefined : Buffer.from(`Bearer ${token}`, 'utf8');
  };

  // Requests past the token check and not yet finished, with the Authorization header they carried.
  const open = new Map<ServerResponse, string | undefined>();
  const listener = (req: IncomingMessage, res: ServerResponse): void => {
    const pathname = (req.url ?? '/').split('?')[0];
    if (pathname !== path) {
      sendJsonError(res, 404, `not found: the MCP endpoint is ${path}`);
      return;
    }
    if (checkHost !== undefined && !checkHost(req, res)) return;
    if (!checkOrigin(req, res)) return;
    const expected = expectedHeader();
    const given = req.headers.authorization;
    if (expected !== undefined && !authorized(given, expected)) {
      res.setHeader('WWW-Authenticate', 'Bearer realm="trellis"');
      sendJsonError(
        res,
        401,
        'missing or wrong bearer token: send "Authorization: Bearer <token>" (the token `trellis serve --http` printed, TRELLIS_SERVE_TOKEN or [serve] token)',
      );
      return;
    }
    // Ends the calls this request carries when its connection closes or reauthorize() ends it. The
    // socket's close too: a response queued behind another on a pipelining connection gets no
    // 'close' of its own when that connection dies.
    const ended = new AbortController();
    const end = (): void => ended.abort();
    const socket = req.socket;
    socket.once('close', end);
    open.set(res, given);
    res.once('close', () => {
      open.delete(res);
      socket.off('close', end);
      end();
    });
    httpRequestSignal
      .run(ended.signal, () => serveNode(req, res))
      .catch((error: unknown) => {
        options.onerror?.(error instanceof Error ? error : new Error(String(error)));
        if (!res.headersSent) sendJsonError(res, 500, 'internal error');
        else res.end();
      });
  };

  const http: HttpServer = createServer(listener);
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port ?? 0, host, () => {
      http.off('error', reject);
      resolve();
    });
  });
  const address = http.address() as AddressInfo;
  const url = `http://${bareHost}:${address.port}${path}`;
  let closing: Promise<void> | undefined;
  return {
    url,
    port: address.port,
    reauthorize() {
      const expected = expectedHeader();
      if (expected === undefined) return 0;
      let ended = 0;
      for (const [res, given] of open) {
        if (authorized(given, expected)) continue;
        // The socket goes (a stream the SDK is writing cannot be ended politely from outside), and
        // with it, through the request's signal, the calls it carries.
        res.destroy();
        ended += 1;
      }
      return ended;
    },
    close() {
      closing ??= (async () => {
        unsubscribe();
        await handler.close();
        await new Promise<void>((resolve) => {
          http.close(() => resolve());
          http.closeAllConnections();
        });
      })();
      return closing;
    },
  };
}

function authorized(header: string | undefined, expected: Buffer): boolean {
  if (header === undefined) return false;
  const given = Buffer.from(header, 'utf8');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

function sendJsonError(res: ServerResponse, status: number, message: string): void {
  const body = JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32000, message } });
  res.writeHead(status, { 'Content-Type': 'application/json' }).end(body);
}
