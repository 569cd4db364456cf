import { isIP } from 'node:net';
import { ERROR_CODES, ToolError } from '@trellis/sdk';
import { METADATA_HOSTS, inspectAddress } from './classifyAddress.ts';
import type { AddressClass } from './classifyAddress.ts';
import { matchHostGlob } from './matchHostGlob.ts';
import type { WebSettings } from './WebSettingsSchema.ts';

const METADATA_NAMES = new Set(METADATA_HOSTS);

/** The URL's host without IPv6 brackets or a trailing dot, lower-cased. */
export function bareHost(url: URL): string {
  return url.hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
}

/**
 * Checks a URL before any network traffic: syntax, scheme, credentials, host globs, metadata
 * names, and IP literals. Returns the parsed URL; throws a `ToolError` naming the fix.
 * `hop` is 0 for the URL the caller gave and counts redirects after that.
 */
export function checkUrl(raw: string, settings: WebSettings, hop = 0): URL {
  const where = hop === 0 ? 'url' : `redirect ${hop} (to ${raw})`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ToolError(
      ERROR_CODES.INVALID_ARGUMENT,
      `${where}: "${raw}" is not an absolute URL; give one like "https://example.com/page".`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ToolError(
      ERROR_CODES.INVALID_ARGUMENT,
      `${where}: scheme "${url.protocol.replace(/:$/, '')}" is not supported; only http and https URLs can be fetched.`,
    );
  }
  if (url.username !== '' || url.password !== '') {
    throw new ToolError(
      ERROR_CODES.INVALID_ARGUMENT,
      `${where}: URLs with a user name or password are not fetched; remove the "user:password@" part.`,
    );
  }
  const host = bareHost(url);
  if (host === '') {
    throw new ToolError(ERROR_CODES.INVALID_ARGUMENT, `${where}: the URL has no host.`);
  }
  if (METADATA_NAMES.has(host)) {
    throw new ToolError(ERROR_CODES.NOT_ALLOWED, `${where}: ${host} is a cloud-metadata service; core-web never fetches it.`);
  }
  const denied = settings.deny_hosts.find((glob) => matchHostGlob(glob, host));
  if (denied !== undefined) {
    throw new ToolError(
      ERROR_CODES.NOT_ALLOWED,
      `${where}: host ${host} matches deny_hosts entry "${denied}" in [runtime.tools.web]; fetch another site.`,
    );
  }
  if (settings.allow_hosts.length > 0 && !settings.allow_hosts.some((glob) => matchHostGlob(glob, host))) {
    throw new ToolError(
      ERROR_CODES.NOT_ALLOWED,
      `${where}: host ${host} is not in allow_hosts of [runtime.tools.web] (${settings.allow_hosts.join(', ')}); only those hosts can be fetched.`,
    );
  }
  if (isIP(host) !== 0) checkAddress({ host, address: host, settings, where });
  return url;
}

const CLASS_WORDS: Record<Exclude<AddressClass, 'public'>, string> = {
  unspecified: 'an unspecified address',
  loopback: 'a loopback address',
  private: 'a private-network address',
  shared: 'a carrier-grade NAT address',
  'link-local': 'a link-local address',
  multicast: 'a multicast address',
  reserved: 'a reserved address',
  metadata: 'a cloud-metadata or wire-server address',
  invalid: 'not a valid IP address',
};

/** Refuses an address (as resolved for `host`) that is not public, unless private targets are allowed; metadata always. */
export function checkAddress(options: { host: string; address: string; settings: WebSettings; where: string }): void {
  const { host, address, settings, where } = options;
  const verdict = inspectAddress(address);
  const cls = verdict.class;
  if (cls === 'public') return;
  // An IPv6 form carrying an IPv4 address is judged, and named, as that IPv4 address.
  const carried = verdict.embedded === undefined ? '' : ` (${verdict.embedded.form}, carrying ${verdict.embedded.ipv4})`;
  const what =
    host === address ? `${address}${carried} is ${CLASS_WORDS[cls]}` : `${host} resolves to ${address}${carried}, ${CLASS_WORDS[cls]}`;
  if (cls === 'metadata' || cls === 'invalid') {
    const service = verdict.service === undefined ? '' : ` (${verdict.service})`;
    throw new ToolError(ERROR_CODES.NOT_ALLOWED, `${where}: ${what}${service}; core-web never fetches it.`);
  }
  if (settings.allow_private || settings.private_hosts.some((glob) => matchHostGlob(glob, host))) return;
  throw new ToolError(
    ERROR_CODES.NOT_ALLOWED,
    `${where}: ${what}; core-web only fetches public internet addresses. If this internal host is meant to be reachable, ` +
      `add "${host}" to private_hosts in [runtime.tools.web]; otherwise fetch a public URL.`,
  );
}
