import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isToolError } from '@trellis/sdk';
import { plugin } from '../src/index.ts';
import { createFetchTool, FetchInputSchema, fetchTool } from '../src/fetchTool.ts';
import type { ResolveHost } from '../src/fetchUrl.ts';
import { WebSettingsSchema } from '../src/WebSettingsSchema.ts';
import { makeContext } from './makeContext.ts';
import { agreement } from '@trellis/testing';
import { startTestServer } from './startTestServer.ts';

/**
 * TEST-ONLY allowance: the narrowest setting that lets core-web reach the test server, which
 * listens on 127.0.0.1 only. Production defaults refuse loopback (proved below).
 */
const LOOPBACK_ONLY = { private_hosts: ['127.0.0.1'] };

let server: Awaited<ReturnType<typeof startTestServer>>;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  server.seen.length = 0;
});

async function fetchWith(input: unknown, settings: Record<string, unknown> = LOOPBACK_ONLY, tool = fetchTool) {
  return tool.run(FetchInputSchema.parse(input), makeContext({ settings }));
}

async function refusal(
  input: unknown,
  settings: Record<string, unknown> = {},
  tool = fetchTool,
): Promise<{ code: string; message: string }> {
  try {
    await fetchWith(input, settings, tool);
  } catch (error) {
    if (isToolError(error)) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('expected a refusal');
}

/** A resolver that maps test names to 127.0.0.1 (never anything else) and counts its calls. */
function fakeResolver(map: Record<string, string[]>): ResolveHost & { calls: string[] } {
  const calls: string[] = [];
  const resolve: ResolveHost = async (host) => {
    calls.push(host);
    const addresses = map[host];
    if (addresses === undefined) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return Object.assign(resolve, { calls });
}

describe('settings and schema', () => {
  it('accepts {} with safe defaults and refuses unknown keys', () => {
    expect(WebSettingsSchema.parse({})).toEqual({
      allow_private: false,
      private_hosts: [],
      allow_hosts: [],
      deny_hosts: [],
      timeout_seconds: 20,
      max_bytes: 2 * 1024 * 1024,
      max_text_chars: 200_000,
      user_agent: 'Trellis-core-web/0.1 (+https://github.com/trellis)',
    });
    expect(WebSettingsSchema.safeParse({ allow_privat: true }).success).toBe(false);
    expect(WebSettingsSchema.safeParse({ allow_hosts: ['exa mple.com'] }).success).toBe(false);
    expect(WebSettingsSchema.safeParse({ max_bytes: 10 }).success).toBe(false);
    expect(plugin.settings?.key).toBe('web');
    expect(plugin.tools.map((t) => t.name)).toEqual(['fetch']);
  });

  it('accepts http(s) URLs and a format, refuses the rest', () => {
    expect(FetchInputSchema.safeParse({ url: 'https://example.com/' }).success).toBe(true);
    expect(FetchInputSchema.safeParse({ url: 'HTTP://example.com/', format: 'markdown' }).success).toBe(true);
    expect(FetchInputSchema.safeParse({ url: 'ftp://example.com/' }).success).toBe(false);
    expect(FetchInputSchema.safeParse({ url: 'file:///etc/passwd' }).success).toBe(false);
    expect(FetchInputSchema.safeParse({ url: 'example.com' }).success).toBe(false);
    expect(FetchInputSchema.safeParse({ url: 'https://example.com/', format: 'html' }).success).toBe(false);
    expect(FetchInputSchema.safeParse({ url: 'https://example.com/', method: 'POST' }).success).toBe(false);
  });

  it('is validated the same way by the runtime (JSON Schema + ajv + re2js patterns)', () => {
    const inputs = [
      { url: 'https://example.com/' },
      { url: 'Http://example.com/', format: 'markdown' },
      { url: 'ftp://example.com/' },
      { url: ' https://example.com/' },
      { url: 'https://example.com/', format: 'pdf' },
      { url: 'https://example.com/', headers: {} },
      {},
    ];
    expect(agreement(FetchInputSchema, inputs)).toEqual([
      [true, true],
      [true, true],
      [false, false],
      [false, false],
      [false, false],
      [false, false],
      [false, false],
    ]);
  });
});

describe('core-web.fetch on the test server (loopback allowed for 127.0.0.1 only)', () => {
  it('turns HTML into readable text, links made absolute, scripts and styles dropped', async () => {
    const result = await fetchWith({ url: `${server.base}/html` });
    expect(result).toEqual({
      status: 200,
      final_url: `${server.base}/html`,
      content_type: 'text/html; charset=utf-8',
      text: `Hello there\n\nSome bold text and a link [${server.base}/next].\n\n * one\n * two\n\nx = 1\n  y = 2`,
      truncated: false,
      redirects: [],
    });
    expect(server.seen).toEqual([
      {
        path: '/html',
        host: `127.0.0.1:${server.port}`,
        userAgent: 'Trellis-core-web/0.1 (+https://github.com/trellis)',
        remoteAddress: '127.0.0.1',
      },
    ]);
  });

  it('turns HTML into Markdown on request', async () => {
    const result = await fetchWith({ url: `${server.base}/html`, format: 'markdown' });
    expect(result.text).toBe(
      `# Hello _there_\n\nSome **bold** text and [a link](${server.base}/next).\n\n- one\n- two\n\n\`\`\`\nx = 1\n  y = 2\n\`\`\``,
    );
  });

  it('pretty-prints JSON, decodes charsets and gzip, returns error statuses with their body', async () => {
    expect((await fetchWith({ url: `${server.base}/json` })).text).toBe('{\n  "a": 1,\n  "b": [\n    true,\n    null\n  ]\n}');
    expect((await fetchWith({ url: `${server.base}/latin1` })).text).toBe('café');
    expect((await fetchWith({ url: `${server.base}/gzip` })).text).toBe('compressed hello');
    expect(await fetchWith({ url: `${server.base}/missing` })).toMatchObject({ status: 404, text: 'no such page', truncated: false });
  });

  it('summarizes binary content instead of dumping it', async () => {
    const result = await fetchWith({ url: `${server.base}/binary` });
    expect(result).toMatchObject({
      status: 200,
      content_type: 'image/png',
      text: '[binary content not shown: image/png, 4.9 KiB. core-web returns text only; use another tool to handle this file type.]',
      truncated: false,
    });
  });

  it('sniffs responses without a content type and names encodings it cannot decode', async () => {
    expect((await fetchWith({ url: `${server.base}/untyped-text` })).text).toBe('just words, no content type');
    expect((await fetchWith({ url: `${server.base}/untyped-html` })).text).toBe('sniffed page');
    expect((await fetchWith({ url: `${server.base}/untyped-binary` })).text).toBe(
      '[binary content not shown: no content type, 4 bytes. core-web returns text only; use another tool to handle this file type.]',
    );
    expect(await fetchWith({ url: `${server.base}/compress` })).toMatchObject({
      text: '[content encoded with "compress", which core-web cannot decode; not shown.]',
      truncated: false,
    });
  });

  it('follows redirects and reports them', async () => {
    const result = await fetchWith({ url: `${server.base}/redirect?to=/json` });
    expect(result).toMatchObject({ status: 200, final_url: `${server.base}/json`, redirects: [`${server.base}/redirect?to=/json`] });
  });

  it('gives up after 5 redirects', async () => {
    expect(await refusal({ url: `${server.base}/loop` }, LOOPBACK_ONLY)).toEqual({
      code: 'NETWORK_ERROR',
      message: `url: more than 5 redirects (${[0, 1, 2, 3, 4, 5].map((n) => (n === 0 ? `${server.base}/loop` : `${server.base}/loop?n=${n}`)).join(' -> ')} -> /loop?n=6); fetch the final address directly if you know it.`,
    });
    expect(server.seen).toHaveLength(6);
  });

  it('cuts an endless body at max_bytes and closes the connection', async () => {
    const result = await fetchWith({ url: `${server.base}/endless` }, { ...LOOPBACK_ONLY, max_bytes: 100_000 });
    expect(result.truncated).toBe(true);
    expect(result.text).toBe('z'.repeat(100_000));
    await expect.poll(() => server.openResponses()).toBe(0);
  });

  it('caps a decompression bomb by decompressed size', async () => {
    const result = await fetchWith({ url: `${server.base}/gzip-bomb` }, { ...LOOPBACK_ONLY, max_bytes: 4096 });
    expect(result).toMatchObject({ truncated: true, text: 'a'.repeat(4096) });
  });

  it('cuts a gzip body of NUL bytes at the cap like any long body, so its JSON stays within max_text_chars', async () => {
    const result = await fetchWith({ url: `${server.base}/gzip-nul` });
    expect(result.truncated).toBe(true);
    // Each NUL goes out as a six-character escape: 200 000 characters of budget hold 33 333 of them.
    expect(result.text).toBe('\u0000'.repeat(33_333));
    expect(JSON.stringify(result.text).length).toBeLessThanOrEqual(200_002);
  });

  it('cuts text longer than max_text_chars', async () => {
    const result = await fetchWith({ url: `${server.base}/endless` }, { ...LOOPBACK_ONLY, max_bytes: 8192, max_text_chars: 1000 });
    expect(result).toMatchObject({ truncated: true, text: 'z'.repeat(1000) });
  });

  it('times out a body that never ends slowly, and a server that never answers', async () => {
    expect(await refusal({ url: `${server.base}/slow-body` }, { ...LOOPBACK_ONLY, timeout_seconds: 0.3 })).toEqual({
      code: 'TIMEOUT',
      message: `Fetching ${server.base}/slow-body did not finish within 0.3 s ([runtime.tools.web] timeout_seconds); the server is slow or the body never ends. Try again later or another source.`,
    });
    expect((await refusal({ url: `${server.base}/slow-headers` }, { ...LOOPBACK_ONLY, timeout_seconds: 0.3 })).code).toBe('TIMEOUT');
    await expect.poll(() => server.openResponses()).toBe(0);
  });

  it('stops when the caller aborts', async () => {
    const controller = new AbortController();
    const pending = fetchTool.run(
      FetchInputSchema.parse({ url: `${server.base}/slow-body` }),
      makeContext({ settings: LOOPBACK_ONLY, signal: controller.signal }),
    );
    setTimeout(() => controller.abort(), 100);
    await expect(pending).rejects.toMatchObject({ code: 'ABORTED' });
  });

  it('resolves a name once and connects to the address it checked, with the Host header of the name', async () => {
    const resolver = fakeResolver({ 'site.test': ['127.0.0.1'] });
    const tool = createFetchTool({ resolveHost: resolver });
    const result = await fetchWith({ url: `http://site.test:${server.port}/host` }, { private_hosts: ['site.test'] }, tool);
    expect(result.text).toBe(`host=site.test:${server.port}`);
    expect(resolver.calls).toEqual(['site.test']);
    expect(server.seen.map((s) => s.remoteAddress)).toEqual(['127.0.0.1']);
  });
});

describe('refusals (default settings: no private targets)', () => {
  it('refuses loopback by default, sending nothing', async () => {
    expect(await refusal({ url: `${server.base}/html` })).toEqual({
      code: 'NOT_ALLOWED',
      message:
        'url: 127.0.0.1 is a loopback address; core-web only fetches public internet addresses. If this internal host is meant to be reachable, add "127.0.0.1" to private_hosts in [runtime.tools.web]; otherwise fetch a public URL.',
    });
    expect(server.seen).toEqual([]);
  });

  it.each([
    'http://10.0.0.1/',
    'http://172.16.5.4/',
    'http://192.168.0.1/',
    'http://169.254.1.1/',
    'http://0.0.0.0/',
    'http://[::]/',
    'http://[::1]/',
    'http://[fe80::1]/',
    'http://[fc00::1]/',
    'http://224.0.0.1/',
    'http://[::ffff:127.0.0.1]/',
    'http://[::ffff:10.0.0.1]/',
    'http://2130706433/',
    'http://0x7f.1/',
    'http://127.1/',
  ])('refuses %s before any connection', async (url) => {
    expect((await refusal({ url })).code).toBe('NOT_ALLOWED');
  });

  it('refuses cloud-metadata targets even when private targets are allowed', async () => {
    for (const url of [
      'http://169.254.169.254/latest/meta-data/',
      'http://[fd00:ec2::254]/',
      'http://metadata.google.internal/computeMetadata/v1/',
      'http://[::ffff:169.254.169.254]/',
    ]) {
      const { code, message } = await refusal({ url }, { allow_private: true });
      expect(code).toBe('NOT_ALLOWED');
      expect(message).toMatch(/cloud-metadata .*core-web never fetches it\.$/);
    }
  });

  it('refuses a DNS name that resolves to 127.0.0.1 (the system resolver, localhost)', async () => {
    expect(await refusal({ url: `http://localhost:${server.port}/html` })).toEqual({
      code: 'NOT_ALLOWED',
      message: `url: localhost resolves to 127.0.0.1, a loopback address; core-web only fetches public internet addresses. If this internal host is meant to be reachable, add "localhost" to private_hosts in [runtime.tools.web]; otherwise fetch a public URL.`,
    });
    expect(server.seen).toEqual([]);
  });

  it('refuses a name resolving to loopback or to a mix of public and private addresses (injected resolver)', async () => {
    const resolver = fakeResolver({
      'rebind.test': ['127.0.0.1'],
      'mixed.test': ['93.184.216.34', '127.0.0.1'],
      'mapped.test': ['::ffff:127.0.0.1'],
    });
    const tool = createFetchTool({ resolveHost: resolver });
    expect((await refusal({ url: `http://rebind.test:${server.port}/` }, {}, tool)).message).toMatch(
      /^url: rebind\.test resolves to 127\.0\.0\.1, a loopback address;/,
    );
    expect((await refusal({ url: `http://mixed.test:${server.port}/` }, {}, tool)).message).toMatch(
      /^url: mixed\.test resolves to 127\.0\.0\.1, a loopback address;/,
    );
    expect((await refusal({ url: `http://mapped.test:${server.port}/` }, {}, tool)).message).toMatch(
      /^url: mapped\.test resolves to ::ffff:127\.0\.0\.1 \(IPv4-mapped, carrying 127\.0\.0\.1\), a loopback address;/,
    );
    expect(server.seen).toEqual([]);
  });

  it('refuses a redirect to a private address, checking every hop', async () => {
    for (const to of [
      `http://localhost:${server.port}/html`,
      'http://10.0.0.1/',
      'http://169.254.169.254/',
      'http://[::ffff:127.0.0.1]/',
    ]) {
      server.seen.length = 0;
      const { code, message } = await refusal({ url: `${server.base}/redirect?to=${encodeURIComponent(to)}` }, LOOPBACK_ONLY);
      expect(code).toBe('NOT_ALLOWED');
      expect(message.startsWith(`redirect 1 (to ${new URL(to).href}): `)).toBe(true);
      expect(server.seen.map((s) => s.path)).toEqual([`/redirect?to=${encodeURIComponent(to)}`]);
    }
  });

  it('refuses a redirect to another scheme', async () => {
    expect(await refusal({ url: `${server.base}/redirect?to=${encodeURIComponent('file:///etc/passwd')}` }, LOOPBACK_ONLY)).toEqual({
      code: 'INVALID_ARGUMENT',
      message: 'redirect 1 (to file:///etc/passwd): scheme "file" is not supported; only http and https URLs can be fetched.',
    });
  });

  it('applies allow_hosts and deny_hosts to every hop', async () => {
    expect(await refusal({ url: `${server.base}/html` }, { ...LOOPBACK_ONLY, deny_hosts: ['127.0.0.*'] })).toEqual({
      code: 'NOT_ALLOWED',
      message: 'url: host 127.0.0.1 matches deny_hosts entry "127.0.0.*" in [runtime.tools.web]; fetch another site.',
    });
    expect(await refusal({ url: 'https://example.org/' }, { allow_hosts: ['*.example.com'] })).toEqual({
      code: 'NOT_ALLOWED',
      message: 'url: host example.org is not in allow_hosts of [runtime.tools.web] (*.example.com); only those hosts can be fetched.',
    });
    const viaRedirect = await refusal(
      { url: `${server.base}/redirect?to=${encodeURIComponent('http://elsewhere.test/')}` },
      { ...LOOPBACK_ONLY, allow_hosts: ['127.0.0.1'] },
    );
    expect(viaRedirect.message).toBe(
      'redirect 1 (to http://elsewhere.test/): host elsewhere.test is not in allow_hosts of [runtime.tools.web] (127.0.0.1); only those hosts can be fetched.',
    );
    expect(server.seen).toHaveLength(1);
  });

  it('refuses URLs with credentials and reports unresolvable names', async () => {
    expect((await refusal({ url: 'http://user:pw@example.com/' })).code).toBe('INVALID_ARGUMENT');
    const tool = createFetchTool({ resolveHost: fakeResolver({}) });
    expect(await refusal({ url: 'http://nowhere.test/' }, {}, tool)).toEqual({
      code: 'NETWORK_ERROR',
      message: 'url: could not resolve host nowhere.test (ENOTFOUND); check the spelling of the URL.',
    });
  });

  it('canonicalizes the URL and refuses early what it can see without DNS', async () => {
    const ctx = makeContext();
    expect(await fetchTool.canonicalize!(FetchInputSchema.parse({ url: 'HTTP://Example.COM/a/../b?q=1' }), ctx)).toEqual({
      input: { url: 'http://example.com/b?q=1' },
      summary: { url: 'http://example.com/b?q=1', host: 'example.com', format: 'text' },
    });
    expect(() => fetchTool.canonicalize!(FetchInputSchema.parse({ url: 'http://127.0.0.1/' }), ctx)).toThrow(/loopback/);
  });
});
