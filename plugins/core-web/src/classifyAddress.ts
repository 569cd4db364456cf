import { isIPv4, isIPv6 } from 'node:net';

/** Why an address may not be fetched. `metadata` is refused even when private targets are allowed. */
export type AddressClass =
  | 'public'
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'shared'
  | 'link-local'
  | 'multicast'
  | 'reserved'
  | 'metadata'
  | 'invalid';

/** Cloud instance-metadata endpoints (AWS/GCP/Azure/OpenStack, AWS IPv6, Alibaba, Oracle). */
const METADATA_V4 = new Set(['169.254.169.254', '169.254.170.2', '100.100.100.200', '192.0.0.192']);

function parseV4(text: string): number[] | null {
  if (!isIPv4(text)) return null;
  return text.split('.').map(Number);
}

/** The 16 bytes of an IPv6 address (zone index dropped), or null. */
export function parseIPv6(text: string): number[] | null {
  const address = text.replace(/^\[|\]$/g, '').split('%')[0] ?? '';
  if (!isIPv6(address)) return null;
  let head = address;
  let tailV4: number[] = [];
  const lastColon = head.lastIndexOf(':');
  const maybeV4 = head.slice(lastColon + 1);
  if (maybeV4.includes('.')) {
    const v4 = parseV4(maybeV4);
    if (v4 === null) return null;
    tailV4 = v4;
    head = `${head.slice(0, lastColon + 1)}0:0`;
  }
  const [left = '', right] = head.split('::');
  const leftGroups = left === '' ? [] : left.split(':');
  const rightGroups = right === undefined || right === '' ? [] : right.split(':');
  const missing = 8 - leftGroups.length - rightGroups.length;
  const groups = [...leftGroups, ...Array<string>(right === undefined ? 0 : missing).fill('0'), ...rightGroups];
  if (groups.length !== 8) return null;
  const bytes = groups.flatMap((g) => {
    const n = parseInt(g, 16);
    return [n >> 8, n & 0xff];
  });
  if (tailV4.length === 4) bytes.splice(12, 4, ...tailV4);
  return bytes;
}

function classifyV4(b: number[]): AddressClass {
  const [a = 0, c = 0] = b;
  const text = b.join('.');
  if (METADATA_V4.has(text)) return 'metadata';
  if (a === 0) return 'unspecified'; // 0.0.0.0/8, "this network"
  if (a === 127) return 'loopback';
  if (a === 10) return 'private';
  if (a === 172 && c >= 16 && c <= 31) return 'private';
  if (a === 192 && c === 168) return 'private';
  if (a === 100 && c >= 64 && c <= 127) return 'shared'; // 100.64/10 carrier-grade NAT
  if (a === 169 && c === 254) return 'link-local';
  if (a === 192 && c === 0 && b[2] === 0) return 'reserved'; // 192.0.0/24 IETF protocol assignments
  if (a === 198 && (c === 18 || c === 19)) return 'reserved'; // 198.18/15 benchmarking
  if (a >= 224 && a <= 239) return 'multicast';
  if (a >= 240) return 'reserved'; // 240/4 and the broadcast address
  return 'public';
}

function classifyV6(b: number[]): AddressClass {
  const isZero = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  const v4At = (i: number) => classifyV4(b.slice(i, i + 4));
  // fd00:ec2::254, AWS's IPv6 metadata endpoint.
  if (b[0] === 0xfd && b[1] === 0x00 && b[2] === 0x0e && b[3] === 0xc2 && isZero(4, 14) && b[14] === 0x02 && b[15] === 0x54) return 'metadata';
  if (isZero(0, 16)) return 'unspecified';
  if (isZero(0, 15) && b[15] === 1) return 'loopback';
  // ::ffff:a.b.c.d (IPv4-mapped) and ::a.b.c.d (IPv4-compatible, deprecated): judge the IPv4 address.
  if (isZero(0, 10) && b[10] === 0xff && b[11] === 0xff) return v4At(12);
  if (isZero(0, 12)) return v4At(12);
  // 64:ff9b::/96 (NAT64) and 64:ff9b:1::/48 (local NAT64) embed an IPv4 address in the last 32 bits.
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b) return v4At(12);
  // 2002::/16 (6to4) embeds one in bits 16–47.
  if (b[0] === 0x20 && b[1] === 0x02) return v4At(2);
  const first = b[0] ?? 0;
  const second = b[1] ?? 0;
  if ((first & 0xfe) === 0xfc) return 'private'; // fc00::/7 unique local
  if (first === 0xfe && (second & 0xc0) === 0x80) return 'link-local'; // fe80::/10
  if (first === 0xfe && (second & 0xc0) === 0xc0) return 'private'; // fec0::/10 site-local (deprecated)
  if (first === 0xff) return 'multicast';
  if (b[0] === 0x01 && isZero(1, 8)) return 'reserved'; // 100::/64 discard-only
  return 'public';
}

/**
 * Classifies an IP address (IPv4 dotted quad or IPv6, brackets and zone allowed) for outbound
 * fetches. Anything but `public` is refused unless private targets are allowed; `metadata` always.
 */
export function classifyAddress(address: string): AddressClass {
  const v4 = parseV4(address);
  if (v4 !== null) return classifyV4(v4);
  const v6 = parseIPv6(address);
  if (v6 !== null) return classifyV6(v6);
  return 'invalid';
}
