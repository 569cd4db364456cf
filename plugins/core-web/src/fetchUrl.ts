import { lookup as dnsLookup } from 'node:dns/promises';
import { request as httpRequest } from 'node:http';
import type { IncomingMessage, RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import type { LookupFunction } from 'node:net';
import type { Readable, Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { ERROR_CODES, ToolError } from '@trellis/sdk';
import { bareHost, checkAddress, checkUrl } from './checkUrl.ts';
import { sameAddress } from './classifyAddress.ts';
import type { WebSettings } from './WebSettingsSchema.ts';

/** Resolves a host name to its addresses. Injected in tests; the default is the system resolver. */
export type ResolveHost = (host: string) => Promise<ReadonlyArray<{ readonly address: string; readonly family: number }>>;

/** The system resolver (getaddrinfo, as every other program on the machine resolves). */
export const systemResolveHost: ResolveHost = (host) => dnsLookup(host, { all: true, verbatim: true });

/** Redirects followed before giving up. */
export const MAX_REDIRECTS = 5;

/** A fetched response, body bytes capped. */
export interface FetchedResponse {
  readonly status: number;
  readonly finalUrl: string;
  /** Every URL requested, the first one included. */
  readonly chain: readonly string[];
  readonly contentType: string | undefined;
  readonly declaredLength: number | undefined;
  readonly body: Buffer;
  /** True when the body was longer than `max_bytes` and the rest was not read. */
  readonly truncated: boolean;
  /** A Content-Encoding core-web cannot decode; the body was not read. */
  readonly unsupportedEncoding?: string;
}

/** Resolves once and checks every address; returns the one to connect to (IPv4 first). */
async function resolveChecked(
  url: URL,
  settings: WebSettings,
  resolveHost: ResolveHost,
  where: string,
  signal: AbortSignal,
): Promise<{ address: string; family: 4 | 6 }> {
  const host = bareHost(url);
  if (isIP(host) !== 0) return { address: host, family: isIP(host) as 4 | 6 };
  let addresses: ReadonlyArray<{ address: string; family: number }>;
  try {
    addresses = await raceAbort(resolveHost(host), signal);
  } catch (error) {
    if (signal.aborted) throw error;
    throw new ToolError(
      ERROR_CODES.NETWORK_ERROR,
      `${where}: could not resolve host ${host} (${(error as NodeJS.ErrnoException).code ?? String(error)}); check the spelling of the URL.`,
      {
        retryable: true,
      },
    );
  }
  if (addresses.length === 0) {
    throw new ToolError(ERROR_CODES.NETWORK_ERROR, `${where}: host ${host} has no addresses.`, { retryable: true });
  }
  // Every address must pass: a name that mixes public and internal addresses is refused outright.
  for (const { address } of addresses) checkAddress({ host, address, settings, where });
  const chosen = addresses.find((a) => a.family === 4) ?? addresses[0]!;
  return { address: chosen.address, family: chosen.family === 6 ? 6 : 4 };
}

function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/** A `lookup` that answers every query with the one address already checked: no second resolution, no rebinding gap. */
function pinnedLookup(address: string, family: 4 | 6): LookupFunction {
  return ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  }) as unknown as LookupFunction;
}

/**
 * The last check, on the address the socket really connected to: it must be the address that was
 * resolved and checked (the pinned lookup makes it so; this catches any path around it) and must
 * still pass checkAddress. Throws a `ToolError`; the caller destroys the socket before the request
 * is written.
 */
export function checkConnectedAddress(options: {
  remoteAddress: string | undefined;
  pinned: string;
  host: string;
  settings: WebSettings;
  where: string;
}): void {
  const { remoteAddress, pinned, host, settings, where } = options;
  if (remoteAddress === undefined || !sameAddress(remoteAddress, pinned)) {
    throw new ToolError(
      ERROR_CODES.NOT_ALLOWED,
      `${where}: the connection for ${host} went to ${remoteAddress ?? 'an unknown address'}, not to the checked address ${pinned}; nothing was sent.`,
    );
  }
  checkAddress({ host, address: remoteAddress, settings, where });
}

function sendRequest(
  url: URL,
  pinned: { address: string; family: 4 | 6 },
  settings: WebSettings,
  signal: AbortSignal,
  tlsCa: string | undefined,
  where: string,
): Promise<IncomingMessage> {
  const options: RequestOptions & { ca?: string } = {
    method: 'GET',
    protocol: url.protocol,
    hostname: bareHost(url),
    port: url.port === '' ? undefined : Number(url.port),
    path: `${url.pathname}${url.search}`,
    headers: {
      'user-agent': settings.user_agent,
      accept: 'text/html,application/xhtml+xml,application/json;q=0.9,text/*;q=0.8,*/*;q=0.5',
      'accept-encoding': 'gzip, deflate, br',
    },
    agent: false,
    lookup: pinnedLookup(pinned.address, pinned.family),
    signal,
    // TLS: SNI and certificate checks use the URL's host name (Node's default), never the address.
    ...(tlsCa === undefined ? {} : { ca: tlsCa }),
  };
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(options, resolve);
    req.on('error', reject);
    // Runs before the request is written: the 'socket' event comes before the request flushes its
    // headers, which wait for 'connect' behind this listener.
    req.on('socket', (socket) => {
      const guard = () => {
        try {
          checkConnectedAddress({ remoteAddress: socket.remoteAddress, pinned: pinned.address, host: bareHost(url), settings, where });
        } catch (error) {
          req.destroy(error as Error);
        }
      };
      if (socket.connecting) socket.once('connect', guard);
      else guard();
    });
    req.end();
  });
}

function decoderFor(encoding: string | undefined): Transform | null | 'unsupported' {
  const value = (encoding ?? '').trim().toLowerCase();
  if (value === '' || value === 'identity') return null;
  if (value === 'gzip' || value === 'x-gzip') return createGunzip();
  if (value === 'deflate') return createInflate();
  if (value === 'br') return createBrotliDecompress();
  return 'unsupported';
}

/** Reads at most `maxBytes` of the (decompressed) body, then stops reading and closes the connection. */
async function readCapped(
  res: IncomingMessage,
  maxBytes: number,
  signal: AbortSignal,
): Promise<{ body: Buffer; truncated: boolean; unsupportedEncoding?: string }> {
  const decoder = decoderFor(res.headers['content-encoding']);
  if (decoder === 'unsupported') {
    res.destroy();
    return { body: Buffer.alloc(0), truncated: false, unsupportedEncoding: String(res.headers['content-encoding']) };
  }
  const stream: Readable = decoder === null ? res : res.pipe(decoder);
  if (decoder !== null) res.on('error', (error) => decoder.destroy(error));
  const onAbort = () => {
    res.destroy();
    stream.destroy(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
  };
  signal.addEventListener('abort', onAbort, { once: true });
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  try {
    for await (const chunk of stream) {
      const buf = chunk as Buffer;
      const room = maxBytes - size;
      if (buf.length >= room) {
        chunks.push(buf.subarray(0, room));
        size += room;
        // One byte more than allowed, or exactly full with more to come: stop either way.
        truncated = buf.length > room || !res.complete;
        break;
      }
      chunks.push(buf);
      size += buf.length;
    }
  } finally {
    signal.removeEventListener('abort', onAbort);
    res.destroy();
    if (stream !== res) stream.destroy();
  }
  if (signal.aborted) throw signal.reason;
  return { body: Buffer.concat(chunks), truncated };
}

/**
 * Fetches a URL the careful way: every hop's URL is checked, its host resolved once, every
 * address checked, and the connection made to the checked address; redirects are followed by
 * hand (at most 5); the body is read up to `max_bytes` (decompressed); everything ends at
 * `timeout_seconds`. Throws `ToolError` for refusals, network failures and the timeout.
 */
export async function fetchUrl(options: {
  url: string;
  settings: WebSettings;
  resolveHost: ResolveHost;
  signal: AbortSignal;
  /** Trusted CA certificates (PEM) instead of Node's bundled ones; for tests and private PKI. */
  tlsCa?: string | undefined;
}): Promise<FetchedResponse> {
  const { settings, resolveHost } = options;
  const deadline = AbortSignal.timeout(Math.round(settings.timeout_seconds * 1000));
  const signal = AbortSignal.any([options.signal, deadline]);
  const chain: string[] = [];
  let next = options.url;
  try {
    for (let hop = 0; ; hop += 1) {
      const where = hop === 0 ? 'url' : `redirect ${hop} (to ${next})`;
      const url = checkUrl(next, settings, hop);
      chain.push(url.href);
      const pinned = await resolveChecked(url, settings, resolveHost, where, signal);
      const res = await sendRequest(url, pinned, settings, signal, options.tlsCa, where);
      const status = res.statusCode ?? 0;
      const location = res.headers.location;
      if ([301, 302, 303, 307, 308].includes(status) && location !== undefined) {
        res.destroy();
        if (hop >= MAX_REDIRECTS) {
          throw new ToolError(
            ERROR_CODES.NETWORK_ERROR,
            `url: more than ${MAX_REDIRECTS} redirects (${chain.join(' -> ')} -> ${location}); fetch the final address directly if you know it.`,
          );
        }
        try {
          next = new URL(location, url).href;
        } catch {
          throw new ToolError(
            ERROR_CODES.NETWORK_ERROR,
            `redirect ${hop + 1}: ${url.href} redirects to "${location}", which is not a valid URL.`,
          );
        }
        continue;
      }
      const length = Number(res.headers['content-length']);
      const { body, truncated, unsupportedEncoding } = await readCapped(res, settings.max_bytes, signal);
      return {
        status,
        finalUrl: url.href,
        chain,
        contentType: res.headers['content-type'],
        declaredLength: Number.isFinite(length) && length >= 0 ? length : undefined,
        body,
        truncated,
        ...(unsupportedEncoding === undefined ? {} : { unsupportedEncoding }),
      };
    }
  } catch (error) {
    if (error instanceof ToolError) throw error;
    if (options.signal.aborted) {
      throw new ToolError(ERROR_CODES.ABORTED, `The fetch of ${options.url} was aborted by the caller.`);
    }
    if (deadline.aborted) {
      throw new ToolError(
        ERROR_CODES.TIMEOUT,
        `Fetching ${chain.at(-1) ?? options.url} did not finish within ${settings.timeout_seconds} s ([runtime.tools.web] timeout_seconds); the server is slow or the body never ends. Try again later or another source.`,
        { retryable: true },
      );
    }
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== undefined && (code.startsWith('ERR_TLS') || code.includes('CERT') || code.startsWith('UNABLE_TO'))) {
      throw new ToolError(
        ERROR_CODES.NETWORK_ERROR,
        `Fetching ${chain.at(-1) ?? options.url} failed: the server's TLS certificate could not be verified (${code}); core-web does not fetch sites with invalid certificates.`,
      );
    }
    throw new ToolError(
      ERROR_CODES.NETWORK_ERROR,
      `Fetching ${chain.at(-1) ?? options.url} failed: ${code ?? (error as Error).message}. Check the URL; the site may be down.`,
      { retryable: true },
    );
  }
}
