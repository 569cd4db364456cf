import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startRecordingProxy, type RecordingProxy } from '@trellis/test-support';
import { createSandbox, runCliAsync, type Sandbox } from './cliHarness.ts';
import { startHttpServe, type HttpServe } from './serveFixture.ts';

// The bridge against another Trellis over Streamable HTTP: trellis serve --http speaks 2026-07-28,
// so the bridge negotiates it (server/discover, no initialize) and every POST carries the standard
// headers (SEP-2243) and the configured Authorization header. A recording proxy in between sees it.
let sandbox: Sandbox;
let serve: HttpServe | undefined;
let proxy: RecordingProxy | undefined;
beforeEach(() => {
  sandbox = createSandbox();
  sandbox.env.XDG_STATE_HOME = join(sandbox.home, '.local', 'state');
});
afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
  await serve?.stop();
  sandbox.cleanup();
});

describe('the bridge over HTTP against trellis serve --http', () => {
  it('negotiates 2026-07-28, sends the standard headers and the configured ones, and calls', async () => {
    serve = await startHttpServe(sandbox, [], { TRELLIS_SERVE_TOKEN: 'bridge-token-123' });
    proxy = await startRecordingProxy(new URL(serve.url));
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

    const posts = proxy.seen.filter((entry) => entry.method === 'POST');
    const methods = posts.map((post) => (JSON.parse(post.body) as { method?: string }).method);
    expect(methods).toContain('server/discover');
    expect(methods).not.toContain('initialize');
    expect(methods).toContain('tools/call');
    for (const post of posts) {
      const message = JSON.parse(post.body) as { method?: string; params?: { name?: string } };
      expect(post.headers.authorization).toBe('Bearer bridge-token-123');
      if (message.method === undefined) continue;
      expect(post.headers['mcp-method']).toBe(message.method);
      if (message.method === 'tools/call') expect(post.headers['mcp-name']).toBe('builtin-tools__echo');
    }
  }, 120_000);
});
