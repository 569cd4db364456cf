import { writeFileSync } from 'node:fs';
import { createServer, request, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSandbox, runCliAsync, type Sandbox } from './cliHarness.ts';
import { startHttpServe, type HttpServe } from './serveFixture.ts';

// The bridge against another Trellis over Streamable HTTP: trellis serve --http speaks 2026-07-28,
// so the bridge negotiates it (server/discover, no initialize) and every POST carries the standard
// headers (SEP-2243) and the configured Authorization header. A recording proxy in between sees it.
let sandbox: Sandbox;
let serve: HttpServe | undefined;
let closeProxy: (() => void) | undefined;
beforeEach(() => {
  sandbox = createSandbox();
  sandbox.env.XDG_STATE_HOME = join(sandbox.home, '.local', 'state');
});
afterEach(async () => {
  closeProxy?.();
  await serve?.stop();
  sandbox.cleanup();
});

async function recordingProxy(target: URL): Promise<{ url: string; seen: Array<{ headers: IncomingHttpHeaders; body: string }> }> {
  const seen: Array<{ headers: IncomingHttpHeaders; body: string }> = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      if (req.method === 'POST') seen.push({ headers: req.headers, body });
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
  closeProxy = () => {
    server.closeAllConnections();
    server.close();
  };
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, seen };
}

describe('the bridge over HTTP against trellis serve --http', () => {
  it('negotiates 2026-07-28, sends the standard headers and the configured ones, and calls', async () => {
    serve = await startHttpServe(sandbox, [], { TRELLIS_SERVE_TOKEN: 'bridge-token-123' });
    const proxy = await recordingProxy(new URL(serve.url));
    const config = join(sandbox.workspace, 'runtime.toml');
    writeFileSync(
      config,
      `[plugins.entries.mcp]\nenabled = true\n\n[[plugins.entries.mcp.config.servers]]\nname = "other"\nurl = ${JSON.stringify(proxy.url)}\nheaders = { Authorization = "Bearer bridge-token-123" }\ninclude_tools = ["builtin-tools__echo"]\n`,
    );
    const called = await runCliAsync(sandbox, [
      'tools',
      'call',
      'mcp.other.builtin-tools__echo',
      '--args',
      '{"over":"http"}',
      '--json',
      '--config',
      config,
    ]);
    expect(JSON.parse(called.stdout)).toEqual({ ok: true, value: { over: 'http' } });

    const methods = proxy.seen.map((post) => (JSON.parse(post.body) as { method?: string }).method);
    expect(methods).toContain('server/discover');
    expect(methods).not.toContain('initialize');
    expect(methods).toContain('tools/call');
    for (const post of proxy.seen) {
      const message = JSON.parse(post.body) as { method?: string; params?: { name?: string } };
      expect(post.headers.authorization).toBe('Bearer bridge-token-123');
      if (message.method === undefined) continue;
      expect(post.headers['mcp-method']).toBe(message.method);
      if (message.method === 'tools/call') expect(post.headers['mcp-name']).toBe('builtin-tools__echo');
    }
  }, 120_000);
});
