import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { PluginImplementation } from '../../src/PluginImplementation.ts';
import { checkHttpEndpoint, createHttpImplementation } from '../../src/adapters/createHttpImplementation.ts';
import type { HttpRuntime } from '../../src/adapters/createHttpImplementation.ts';
import { callOf, manifestOf, waitFor } from './helpers.ts';

type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;
interface Seen {
  readonly method: string;
  readonly url: string;
  readonly body: string;
  readonly auth: string | undefined;
}

const servers: Server[] = [];
const impls: PluginImplementation[] = [];

afterEach(async () => {
  for (const impl of impls.splice(0)) await impl.dispose();
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
});

async function serve(handler: Handler): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', body, auth: req.headers.authorization });
      handler(req, body, res);
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

function json(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
}

/** A well-behaved plugin; `tool` answers POST /tools/*. */
function plugin(tool: Handler): Handler {
  return (req, body, res) => {
    if (req.url === '/initialize') return json(res, 200, { success: true });
    if (req.url === '/tools') return json(res, 200, { tools: [{ name: 'echo', description: 'Echo', parameters: { type: 'object' } }] });
    if (req.url === '/health') return json(res, 200, { healthy: true });
    return tool(req, body, res);
  };
}

function setup(endpoint: string, runtime: Partial<HttpRuntime> = {}, env: Record<string, string> = {}) {
  const rt: HttpRuntime = {
    type: 'http',
    endpoint,
    headers: {},
    // Generous: a loaded machine must not turn a local round trip into a TIMEOUT.
    timeout_seconds: 20,
    retry_count: 0,
    retry_delay_seconds: 0,
    max_response_bytes: 1000,
    ...runtime,
  };
  const impl = createHttpImplementation({
    pluginId: 'notes',
    manifest: manifestOf({ id: 'notes', runtime: rt }),
    runtime: rt,
    config: { dir: 'x' },
    env,
  });
  impls.push(impl);
  return impl;
}

const paths = (seen: Seen[]) => seen.map((s) => `${s.method} ${s.url}`);

describe('checkHttpEndpoint', () => {
  it('allows https anywhere and plain http only to loopback', () => {
    for (const ok of [
      'https://plugins.example.com/x',
      'http://127.0.0.1:8080',
      'http://127.9.8.7',
      'http://[::1]:9000',
      'http://localhost:3000/api',
    ]) {
      expect(checkHttpEndpoint('p', ok).ok).toBe(true);
    }
    expect(checkHttpEndpoint('p', 'http://10.0.0.5:8080')).toEqual({
      ok: false,
      message:
        'plugin p: [runtime] endpoint http://10.0.0.5:8080 uses plain http to a host that is not loopback; use https:// (plain http is allowed only for 127.0.0.0/8, ::1 and localhost)',
    });
    expect(checkHttpEndpoint('p', 'http://127.0.0.1.evil.com').ok).toBe(false);
    expect(checkHttpEndpoint('p', 'ftp://127.0.0.1').ok).toBe(false);
    expect(checkHttpEndpoint('p', 'https://user:pw@example.com').ok).toBe(false);
  });

  it('refuses an insecure endpoint at construction: disabled, never contacted', async () => {
    const impl = setup('http://example.com:8080');
    expect(impl.state()).toBe('disabled');
    expect(await impl.call(callOf('echo'))).toEqual({
      ok: false,
      notDispatched: true,
      error: {
        code: 'INSECURE_ENDPOINT',
        message:
          'plugin notes: [runtime] endpoint http://example.com:8080 uses plain http to a host that is not loopback; use https:// (plain http is allowed only for 127.0.0.0/8, ::1 and localhost)',
        retryable: false,
      },
    });
  });
});

describe('http adapter', () => {
  it('initializes with config and expanded headers, discovers tools, posts arguments', async () => {
    const server = await serve(
      plugin((req, body, res) =>
        json(res, 200, req.url === '/tools/raw' ? { plain: JSON.parse(body) } : { success: true, data: JSON.parse(body) }),
      ),
    );
    const impl = setup(server.url, { headers: { Authorization: 'Bearer ${NOTES_TOKEN}' } }, { NOTES_TOKEN: 'tok-1' });
    await impl.start();
    expect(impl.state()).toBe('active');
    expect(impl.discoveredTools?.()?.map((t) => t.name)).toEqual(['echo']);
    expect(await impl.call(callOf('echo', { a: 1 }))).toEqual({ ok: true, value: { a: 1 } });
    expect(await impl.call(callOf('raw', { b: 2 }))).toEqual({ ok: true, value: { plain: { b: 2 } } });
    expect(server.seen).toEqual([
      { method: 'POST', url: '/initialize', body: '{"config":{"dir":"x"}}', auth: 'Bearer tok-1' },
      { method: 'GET', url: '/tools', body: '', auth: 'Bearer tok-1' },
      { method: 'POST', url: '/tools/echo', body: '{"a":1}', auth: 'Bearer tok-1' },
      { method: 'POST', url: '/tools/raw', body: '{"b":2}', auth: 'Bearer tok-1' },
    ]);
  });

  it('a header naming an unset variable is PLUGIN_LOAD_FAILED', async () => {
    const impl = setup('http://127.0.0.1:1', { headers: { Authorization: 'Bearer ${NOPE_TOKEN}' } });
    expect(await impl.call(callOf('echo'))).toEqual({
      ok: false,
      notDispatched: true,
      error: {
        code: 'PLUGIN_LOAD_FAILED',
        message:
          'plugin notes: [runtime] headers.Authorization uses ${NOPE_TOKEN}, but the variable is not set in the host environment; set it or remove the reference',
        retryable: false,
      },
    });
  });

  it('maps a failure envelope to TOOL_FAILED', async () => {
    const server = await serve(plugin((_req, _body, res) => json(res, 200, { success: false, error: 'no such note' })));
    expect(await setup(server.url).call(callOf('echo'))).toEqual({
      ok: false,
      error: { code: 'TOOL_FAILED', message: 'notes.echo failed: no such note', retryable: false },
    });
  });

  it('wraps a code only the host may report: PLUGIN_ERROR naming the code the plugin sent', async () => {
    const server = await serve(
      plugin((_req, _body, res) => json(res, 200, { success: false, error: { code: 'POLICY_DENIED', message: 'denied' } })),
    );
    expect(await setup(server.url).call(callOf('echo'))).toEqual({
      ok: false,
      error: {
        code: 'PLUGIN_ERROR',
        message: 'notes.echo failed with code POLICY_DENIED, which only the host may report, so it is shown as PLUGIN_ERROR: denied',
        retryable: false,
      },
    });
  });

  it('a failure envelope whose error nests 100 000 levels deep: PROTOCOL_ERROR naming the plugin, then served again', async () => {
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    const server = await serve(
      plugin((req, body, res) => {
        if (req.url === '/tools/deep') return res.end(`{"success":false,"error":${deep}}`);
        return json(res, 200, { success: true, data: JSON.parse(body) });
      }),
    );
    const impl = setup(server.url, { max_response_bytes: 300_000 });
    expect(await impl.call(callOf('deep'))).toEqual({
      ok: false,
      error: {
        code: 'PROTOCOL_ERROR',
        message: `notes.deep: the plugin's error value nests deeper than 64 levels; answer with a string or a {"code","message"} object`,
        retryable: false,
      },
    });
    expect(await impl.call(callOf('echo', { after: 'deep' }))).toEqual({ ok: true, value: { after: 'deep' } });
  });

  it('refused connection: HTTP_ERROR, retryable, not dispatched', async () => {
    const probe = await serve(() => {});
    const url = probe.url;
    const server = servers.pop()!;
    await new Promise((r) => server.close(r));
    const impl = setup(url, { retry_count: 1 });
    const outcome = await impl.call(callOf('echo'));
    expect(outcome).toEqual({
      ok: false,
      notDispatched: true,
      error: { code: 'HTTP_ERROR', message: `plugin notes: POST /initialize could not reach ${url} (ECONNREFUSED)`, retryable: true },
    });
    expect(impl.state()).toBe('error');
  });

  it('500 then recovery: the next call initializes again first; 4xx does not', async () => {
    let failNext = true;
    const server = await serve(
      plugin((req, body, res) => {
        if (req.url === '/tools/missing') return json(res, 404, { error: 'no tool missing' });
        if (failNext) {
          failNext = false;
          return json(res, 500, { error: 'database restarting' });
        }
        json(res, 200, { success: true, data: JSON.parse(body) });
      }),
    );
    const impl = setup(server.url);
    expect(await impl.call(callOf('echo', { n: 1 }))).toEqual({
      ok: false,
      error: { code: 'HTTP_ERROR', message: 'notes.echo: the plugin answered HTTP 500: database restarting', retryable: true },
    });
    expect(impl.state()).toBe('error');
    expect(await impl.call(callOf('echo', { n: 2 }))).toEqual({ ok: true, value: { n: 2 } });
    expect(impl.state()).toBe('active');
    expect(await impl.call(callOf('missing'))).toEqual({
      ok: false,
      error: { code: 'HTTP_ERROR', message: 'notes.missing: the plugin answered HTTP 404: no tool missing', retryable: false },
    });
    expect(await impl.call(callOf('echo', { n: 3 }))).toEqual({ ok: true, value: { n: 3 } });
    expect(paths(server.seen)).toEqual([
      'POST /initialize',
      'GET /tools',
      'POST /tools/echo',
      'POST /initialize',
      'GET /tools',
      'POST /tools/echo',
      'POST /tools/missing',
      'POST /tools/echo',
    ]);
  });

  it('retries an idempotent call after a 5xx, initializing again in between', async () => {
    let failNext = true;
    const server = await serve(
      plugin((_req, body, res) => {
        if (failNext) {
          failNext = false;
          return json(res, 503, { error: 'busy' });
        }
        json(res, 200, { success: true, data: JSON.parse(body) });
      }),
    );
    expect(await setup(server.url, { retry_count: 2 }).call(callOf('echo', { k: 1 }))).toEqual({ ok: true, value: { k: 1 } });
    expect(paths(server.seen)).toEqual([
      'POST /initialize',
      'GET /tools',
      'POST /tools/echo',
      'POST /initialize',
      'GET /tools',
      'POST /tools/echo',
    ]);
  });

  it('slow body past timeout_seconds: TIMEOUT, then initialized again', async () => {
    let slow = true;
    const server = await serve(
      plugin((_req, _body, res) => {
        if (!slow) return json(res, 200, { success: true, data: 'fast' });
        slow = false;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"success": tr');
      }),
    );
    // The deadline also bounds the next call's initialize and reply: generous, so a loaded machine cannot fail it.
    const impl = setup(server.url, { timeout_seconds: 3 });
    expect(await impl.call(callOf('echo', {}, 10_000))).toEqual({
      ok: false,
      error: {
        code: 'TIMEOUT',
        message: 'notes.echo did not answer within 3 s (timeout_seconds); the plugin will be initialized again before the next call',
        retryable: true,
      },
    });
    expect(await impl.call(callOf('echo'))).toEqual({ ok: true, value: 'fast' });
    expect(paths(server.seen).filter((p) => p === 'POST /initialize')).toHaveLength(2);
  });

  it('oversize body, streamed or declared: OUTPUT_TOO_LARGE', async () => {
    const server = await serve(
      plugin((req, _body, res) => {
        if (req.url === '/tools/declared') return json(res, 200, { success: true, data: 'z'.repeat(5000) });
        res.writeHead(200, { 'content-type': 'application/json' });
        const chunk = 'z'.repeat(400);
        let sent = 0;
        const tick = () => {
          if (res.destroyed || sent > 50) {
            res.end();
            return;
          }
          sent += 1;
          res.write(chunk, () => setTimeout(tick, 1));
        };
        tick();
      }),
    );
    const impl = setup(server.url);
    const expected = (tool: string) => ({
      ok: false,
      error: {
        code: 'OUTPUT_TOO_LARGE',
        message: `notes.${tool}: the response is larger than 1000 bytes (max_response_bytes)`,
        retryable: false,
      },
    });
    expect(await impl.call(callOf('streamed'))).toEqual(expected('streamed'));
    expect(await impl.call(callOf('declared'))).toEqual(expected('declared'));
  });

  it('follows a same-origin redirect but not one to another origin', async () => {
    const other = await serve((_req, _body, res) => json(res, 200, { success: true, data: 'stolen' }));
    const server = await serve(
      plugin((req, body, res) => {
        if (req.url === '/tools/moved') {
          res.writeHead(307, { location: '/tools/echo' });
          res.end();
          return;
        }
        if (req.url === '/tools/away') {
          res.writeHead(307, { location: `${other.url}/tools/echo` });
          res.end();
          return;
        }
        json(res, 200, { success: true, data: JSON.parse(body) });
      }),
    );
    const impl = setup(server.url);
    expect(await impl.call(callOf('moved', { m: 1 }))).toEqual({ ok: true, value: { m: 1 } });
    expect(await impl.call(callOf('away'))).toEqual({
      ok: false,
      error: {
        code: 'HTTP_ERROR',
        message: `notes.away: the plugin redirected to ${other.url}/tools/echo, outside ${server.url}; Trellis does not follow redirects to another origin`,
        retryable: false,
      },
    });
    expect(other.seen).toEqual([]);
  });

  it('a failed GET /health re-initializes the plugin', async () => {
    let healthy = true;
    const base = plugin((_req, body, res) => json(res, 200, { success: true, data: JSON.parse(body) }));
    const server = await serve((req, body, res) => (req.url === '/health' ? json(res, 200, { healthy }) : base(req, body, res)));
    const rt: HttpRuntime = {
      type: 'http',
      endpoint: server.url,
      headers: {},
      timeout_seconds: 2,
      retry_count: 0,
      retry_delay_seconds: 0,
      max_response_bytes: 1000,
    };
    const impl = createHttpImplementation({
      pluginId: 'notes',
      manifest: manifestOf({ id: 'notes', runtime: rt }),
      runtime: rt,
      healthCheckIntervalSeconds: 0.05,
    });
    impls.push(impl);
    expect(await impl.call(callOf('echo', { n: 1 }))).toEqual({ ok: true, value: { n: 1 } });
    healthy = false;
    await waitFor(() => impl.state() === 'error');
    expect(impl.lastError?.()).toBe('plugin notes failed its health check (it answered healthy: false)');
    healthy = true;
    // The monitor initializes it again after its backoff (1 s); calls meanwhile fail fast (healthMonitor.test.ts).
    await waitFor(() => impl.state() === 'active', 30_000);
    expect(await impl.call(callOf('echo', { n: 2 }))).toEqual({ ok: true, value: { n: 2 } });
    expect(paths(server.seen).filter((p) => p !== 'GET /health')).toEqual([
      'POST /initialize',
      'GET /tools',
      'POST /tools/echo',
      'POST /initialize',
      'GET /tools',
      'POST /tools/echo',
    ]);
  });

  it('a caller abort is ABORTED', async () => {
    const server = await serve(plugin(() => {}));
    const impl = setup(server.url);
    await impl.start();
    const controller = new AbortController();
    const pending = impl.call(callOf('echo', {}, 5000, controller));
    setTimeout(() => controller.abort(), 50);
    expect(await pending).toEqual({
      ok: false,
      error: { code: 'ABORTED', message: 'notes.echo was aborted by the caller (waiting for the HTTP plugin)', retryable: false },
    });
  });
});
