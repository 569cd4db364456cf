import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:https';
import type { Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFetchTool, FetchInputSchema } from '../src/fetchTool.ts';
import type { ResolveHost } from '../src/fetchUrl.ts';
import { makeContext } from './makeContext.ts';

// A real HTTPS server on 127.0.0.1 with a throwaway self-signed certificate for "site.test".
let server: Server;
let port: number;
let cert: string;
const seen: Array<{ servername: string | false | null; host: string | undefined }> = [];

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-web-tls-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=site.test',
        '-addext',
        'subjectAltName=DNS:site.test',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    cert = readFileSync(join(dir, 'cert.pem'), 'utf8');
    const key = readFileSync(join(dir, 'key.pem'), 'utf8');
    server = createServer({ cert, key }, (req, res) => {
      seen.push({ servername: (req.socket as TLSSocket).servername, host: req.headers.host });
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('secure hello');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const resolveHost: ResolveHost = async (host) => {
  if (host === 'site.test' || host === 'other.test') return [{ address: '127.0.0.1', family: 4 }];
  throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
};

describe('https to the checked address', () => {
  it('connects to the pinned address while SNI, certificate check and Host use the name', async () => {
    const tool = createFetchTool({ resolveHost, tlsCa: cert });
    const result = await tool.run(
      FetchInputSchema.parse({ url: `https://site.test:${port}/` }),
      makeContext({ settings: { private_hosts: ['*.test'] } }),
    );
    expect(result).toMatchObject({ status: 200, text: 'secure hello', final_url: `https://site.test:${port}/` });
    expect(seen).toEqual([{ servername: 'site.test', host: `site.test:${port}` }]);
  });

  it('still verifies the certificate against the name', async () => {
    const tool = createFetchTool({ resolveHost, tlsCa: cert });
    await expect(
      tool.run(FetchInputSchema.parse({ url: `https://other.test:${port}/` }), makeContext({ settings: { private_hosts: ['*.test'] } })),
    ).rejects.toMatchObject({
      code: 'NETWORK_ERROR',
      message: `Fetching https://other.test:${port}/ failed: the server's TLS certificate could not be verified (ERR_TLS_CERT_ALTNAME_INVALID); core-web does not fetch sites with invalid certificates.`,
    });
    const untrusted = createFetchTool({ resolveHost });
    await expect(
      untrusted.run(
        FetchInputSchema.parse({ url: `https://site.test:${port}/` }),
        makeContext({ settings: { private_hosts: ['*.test'] } }),
      ),
    ).rejects.toMatchObject({
      code: 'NETWORK_ERROR',
      message: `Fetching https://site.test:${port}/ failed: the server's TLS certificate could not be verified (DEPTH_ZERO_SELF_SIGNED_CERT); core-web does not fetch sites with invalid certificates.`,
    });
  });
});
