import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { checkUrl } from '../src/checkUrl.ts';
import { createFetchTool, FetchInputSchema, fetchTool } from '../src/fetchTool.ts';
import type { ResolveHost } from '../src/fetchUrl.ts';
import { WebSettingsSchema } from '../src/WebSettingsSchema.ts';
import { makeContext } from './makeContext.ts';
import { startTestServer } from './startTestServer.ts';
import { asyncRefusalOf, refusalOf } from './refusalOf.ts';

// Issue 12, item 7. Every check here runs before any connection: IP literals through checkUrl and
// the tool's canonicalize (which never touches the network), resolved addresses through an
// injected resolver whose only reachable answer is 127.0.0.1. No test sends a packet anywhere but
// the loopback test server.

const DEFAULTS = WebSettingsSchema.parse({});
const OPEN = WebSettingsSchema.parse({ allow_private: true });

describe('IP literals in URLs, before any connection', () => {
  it.each([
    ['http://[::ffff:0:127.0.0.1]/', 'loopback'],
    ['http://[::ffff:0:10.0.0.1]/', 'private-network'],
    ['http://[::10.0.0.1]/', 'private-network'],
    ['http://[64:ff9b::7f00:1]/', 'loopback'],
    ['http://[64:ff9b:1::808:808]/', 'private-network'],
    ['http://[2002:7f00:1::]/', 'loopback'],
    ['http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/', 'loopback'],
    ['http://192.0.2.10/', 'reserved'],
  ])('refuses %s by default (%s)', (url, word) => {
    const { code, message } = refusalOf(() => checkUrl(url, DEFAULTS));
    expect(code).toBe('NOT_ALLOWED');
    expect(message).toContain(`a ${word} address`);
    // The tool's canonicalize hook refuses it too, so policy and approval never see it.
    expect(() => fetchTool.canonicalize!(FetchInputSchema.parse({ url }), makeContext())).toThrow(/only fetches public internet addresses/);
  });

  it('names the embedding form and the IPv4 address it carries', () => {
    expect(refusalOf(() => checkUrl('http://[::ffff:0:7f00:1]/', DEFAULTS))).toEqual({
      code: 'NOT_ALLOWED',
      message:
        'url: ::ffff:0:7f00:1 (IPv4-translated, carrying 127.0.0.1) is a loopback address; core-web only fetches public internet addresses. If this internal host is meant to be reachable, add "::ffff:0:7f00:1" to private_hosts in [runtime.tools.web]; otherwise fetch a public URL.',
    });
  });

  it.each([
    'http://168.63.129.16/machine?comp=goalstate',
    'http://169.254.170.2/v2/credentials',
    'http://100.100.100.200/latest/meta-data/',
    'http://[fd00:ec2::254]/latest/meta-data/',
    'http://[fd20:ce::254]/computeMetadata/v1/',
    'http://[::ffff:0:a83f:8110]/',
    'http://[64:ff9b::a9fe:a9fe]/',
    'http://metadata.tencentyun.com/latest/meta-data/',
  ])('refuses the metadata or wire-server target %s even with allow_private', (url) => {
    for (const settings of [DEFAULTS, OPEN]) {
      const { code, message } = refusalOf(() => checkUrl(url, settings));
      expect(code).toBe('NOT_ALLOWED');
      expect(message).toMatch(/cloud-metadata|core-web never fetches it/);
    }
  });

  it('says whose endpoint a metadata address is', () => {
    expect(refusalOf(() => checkUrl('http://168.63.129.16/', OPEN)).message).toBe(
      'url: 168.63.129.16 is a cloud-metadata or wire-server address (Azure wire server (VM agent, health and DNS)); core-web never fetches it.',
    );
  });

  it('still passes public addresses, also in an embedding form', () => {
    for (const url of ['http://8.8.8.8/', 'http://[2606:4700:4700::1111]/', 'http://[64:ff9b::808:808]/', 'http://[::ffff:8.8.8.8]/']) {
      expect(checkUrl(url, DEFAULTS).href).toBe(new URL(url).href);
    }
  });
});

describe('addresses a name resolves to, checked before connecting', () => {
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

  /** A name that resolves to the loopback test server and to `hostile`: every address must pass, so the hostile one refuses the fetch. */
  function resolverWith(hostile: string): ResolveHost {
    return async () => [
      { address: '127.0.0.1', family: 4 },
      { address: hostile, family: hostile.includes(':') ? 6 : 4 },
    ];
  }

  it.each([
    ['::ffff:0:a9fe:a9fe', /IPv4-translated, carrying 169\.254\.169\.254\), a cloud-metadata/],
    ['168.63.129.16', /resolves to 168\.63\.129\.16, a cloud-metadata or wire-server address \(Azure wire server/],
    ['64:ff9b::a9fe:a9fe', /NAT64, carrying 169\.254\.169\.254/],
    ['fd20:ce::254', /Google Cloud instance metadata over IPv6/],
  ])('refuses a name resolving to %s, even when the name is in private_hosts; nothing reaches the server', async (hostile, pattern) => {
    const tool = createFetchTool({ resolveHost: resolverWith(hostile) });
    const { code, message } = await asyncRefusalOf(() =>
      tool.run(
        FetchInputSchema.parse({ url: `http://rebind.test:${server.port}/html` }),
        makeContext({ settings: { private_hosts: ['rebind.test'] } }),
      ),
    );
    expect(code).toBe('NOT_ALLOWED');
    expect(message).toMatch(pattern);
    expect(server.seen).toEqual([]);
  });

  it('refuses a name resolving to an IPv4-translated loopback address by default', async () => {
    const tool = createFetchTool({ resolveHost: async () => [{ address: '::ffff:0:7f00:1', family: 6 }] });
    const { code, message } = await asyncRefusalOf(() =>
      tool.run(FetchInputSchema.parse({ url: `http://translated.test:${server.port}/html` }), makeContext()),
    );
    expect(code).toBe('NOT_ALLOWED');
    expect(message).toMatch(
      /^url: translated\.test resolves to ::ffff:0:7f00:1 \(IPv4-translated, carrying 127\.0\.0\.1\), a loopback address;/,
    );
    expect(server.seen).toEqual([]);
  });
});
