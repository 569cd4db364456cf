import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** Why an address may not be fetched. `metadata` is refused even when private targets are allowed. */
export type AddressClass =
  'public' | 'unspecified' | 'loopback' | 'private' | 'shared' | 'link-local' | 'multicast' | 'reserved' | 'metadata' | 'invalid';

/** An IPv6 form that carries an IPv4 address inside it. */
export type EmbeddingForm = 'IPv4-mapped' | 'IPv4-translated' | 'IPv4-compatible' | 'NAT64' | '6to4' | 'Teredo';

/** An address's class, and for an IPv6 form that embeds IPv4, the form and the IPv4 address the class was judged on. */
export interface AddressVerdict {
  readonly class: AddressClass;
  readonly embedded?: { readonly form: EmbeddingForm; readonly ipv4: string };
  /** For `metadata`: whose endpoint it is. */
  readonly service?: string;
}

/**
 * Cloud instance-metadata, credential and wire-server endpoints, refused whatever the settings say.
 * Each one hands out the host's cloud identity or credentials to anything that can send it a GET.
 */
export const METADATA_ADDRESSES: readonly { readonly address: string; readonly what: string }[] = [
  {
    address: '169.254.169.254',
    what: 'instance metadata of AWS, Google Cloud, Azure, Oracle, OpenStack, DigitalOcean, Hetzner and others',
  },
  { address: '169.254.170.2', what: 'AWS ECS task metadata and credentials' },
  { address: '169.254.170.23', what: 'AWS EKS Pod Identity credentials' },
  { address: '168.63.129.16', what: 'Azure wire server (VM agent, health and DNS)' },
  { address: '100.100.100.200', what: 'Alibaba Cloud instance metadata' },
  { address: '192.0.0.192', what: 'Oracle Cloud legacy instance metadata' },
  { address: '169.254.0.23', what: 'Tencent Cloud instance metadata' },
  { address: '169.254.42.42', what: 'Scaleway instance metadata' },
  { address: 'fd00:ec2::254', what: 'AWS instance metadata over IPv6' },
  { address: 'fd00:ec2::23', what: 'AWS EKS Pod Identity over IPv6' },
  { address: 'fd20:ce::254', what: 'Google Cloud instance metadata over IPv6' },
];

/** Host names of cloud metadata services, refused before any lookup whatever the settings say. */
export const METADATA_HOSTS: readonly string[] = [
  'metadata.google.internal',
  'metadata.goog',
  'metadata',
  'instance-data',
  'instance-data.ec2.internal',
  'metadata.tencentyun.com',
  'metadata.platformequinix.com',
  'metadata.packet.net',
  'api.metadata.cloud.ibm.com',
];

const METADATA = new Map(METADATA_ADDRESSES.map(({ address, what }) => [ipaddr.parse(address).toNormalizedString(), what]));

const V4_CLASSES: Record<string, AddressClass> = {
  unicast: 'public',
  // Anycast services reached over the public internet.
  as112: 'public',
  amt: 'public',
  unspecified: 'unspecified',
  broadcast: 'reserved',
  multicast: 'multicast',
  linkLocal: 'link-local',
  loopback: 'loopback',
  carrierGradeNat: 'shared',
  private: 'private',
  reserved: 'reserved',
  benchmarking: 'reserved',
};

const V6_CLASSES: Record<string, AddressClass> = {
  unicast: 'public',
  as112v6: 'public',
  amt: 'public',
  unspecified: 'unspecified',
  loopback: 'loopback',
  linkLocal: 'link-local',
  multicast: 'multicast',
  uniqueLocal: 'private',
  deprecatedSiteLocal: 'private',
  discard: 'reserved',
  benchmarking: 'reserved',
  reserved: 'reserved',
  segmentRouting: 'reserved',
  orchid2: 'reserved',
  deprecatedOrchid: 'reserved',
  droneRemoteIdProtocolEntityTags: 'reserved',
};

function classifyV4(address: ipaddr.IPv4): AddressClass {
  if (METADATA.has(address.toNormalizedString())) return 'metadata';
  // A range the library learns later is unknown here: refuse it rather than call it public.
  return V4_CLASSES[address.range()] ?? 'reserved';
}

function v4From(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

/** The IPv4 address an IPv6 address carries, and how, or null when it carries none. */
function embeddedIPv4(address: ipaddr.IPv6): { form: EmbeddingForm; ipv4: ipaddr.IPv4; also?: ipaddr.IPv4 } | null {
  const p = address.parts;
  const last = () => v4From(p[6]!, p[7]!);
  switch (address.range()) {
    case 'ipv4Mapped':
      return { form: 'IPv4-mapped', ipv4: last() }; // ::ffff:0:0/96
    case 'rfc6145':
      return { form: 'IPv4-translated', ipv4: last() }; // ::ffff:0:0:0/96
    case 'rfc6052':
      return { form: 'NAT64', ipv4: last() }; // 64:ff9b::/96 (64:ff9b:1::/48 is handled below)
    case '6to4':
      return { form: '6to4', ipv4: v4From(p[1]!, p[2]!) }; // 2002:AABB:CCDD::/48
    case 'teredo':
      // 2001:0:SSSS:SSSS:flags:port:CCCC:CCCC — server, then the client's address bit-inverted.
      return { form: 'Teredo', ipv4: v4From(p[6]! ^ 0xffff, p[7]! ^ 0xffff), also: v4From(p[2]!, p[3]!) };
    default:
      // ::a.b.c.d, the deprecated IPv4-compatible form (:: and ::1 are classified before this).
      if (p.slice(0, 6).every((part) => part === 0)) return { form: 'IPv4-compatible', ipv4: last() };
      return null;
  }
}

const LOCAL_NAT64 = ipaddr.IPv6.parseCIDR('64:ff9b:1::/48');

function classifyV6(address: ipaddr.IPv6): AddressVerdict {
  const service = METADATA.get(address.toNormalizedString());
  if (service !== undefined) return { class: 'metadata', service };
  const range = address.range();
  if (range === 'unspecified' || range === 'loopback') return { class: V6_CLASSES[range]! };
  // 64:ff9b:1::/48 is the local-use translation prefix (RFC 8215): where the IPv4 address sits
  // depends on the local network, so it cannot be judged; it is local by definition.
  if (address.match(LOCAL_NAT64)) return { class: 'private' };
  const embedded = embeddedIPv4(address);
  if (embedded !== null) {
    // Judged as the IPv4 address it carries: ::ffff:127.0.0.1 is loopback, 64:ff9b::8.8.8.8 public.
    let cls = classifyV4(embedded.ipv4);
    let shown = embedded.ipv4;
    if (cls === 'public' && embedded.also !== undefined && classifyV4(embedded.also) !== 'public') {
      cls = classifyV4(embedded.also);
      shown = embedded.also;
    }
    const embeddedService = METADATA.get(shown.toNormalizedString());
    return {
      class: cls,
      embedded: { form: embedded.form, ipv4: shown.toString() },
      ...(embeddedService === undefined ? {} : { service: embeddedService }),
    };
  }
  return { class: V6_CLASSES[range] ?? 'reserved' };
}

/**
 * Classifies an IP address (IPv4 dotted quad or IPv6, brackets and zone allowed) for outbound
 * fetches with ipaddr.js's special-purpose ranges, judging every IPv6 form that embeds an IPv4
 * address (mapped, translated, compatible, NAT64, 6to4, Teredo) as that IPv4 address.
 */
export function inspectAddress(address: string): AddressVerdict {
  const bare = address.replace(/^\[|\]$/g, '');
  const withoutZone = bare.split('%')[0] ?? '';
  const family = isIP(withoutZone);
  if (family === 4 && ipaddr.IPv4.isValidFourPartDecimal(withoutZone)) {
    const v4 = ipaddr.IPv4.parse(withoutZone);
    const cls = classifyV4(v4);
    return cls === 'metadata' ? { class: cls, service: METADATA.get(v4.toNormalizedString())! } : { class: cls };
  }
  if (family === 6) return classifyV6(ipaddr.IPv6.parse(withoutZone));
  return { class: 'invalid' };
}

/** The class of an address (see inspectAddress). Anything but `public` is refused unless private targets are allowed; `metadata` and `invalid` always. */
export function classifyAddress(address: string): AddressClass {
  return inspectAddress(address).class;
}

/** Two spellings of one IP address (`::ffff:1.2.3.4` and `::ffff:102:304`, say) compare equal. */
export function sameAddress(a: string, b: string): boolean {
  const parse = (text: string) => {
    const bare = text.replace(/^\[|\]$/g, '').split('%')[0] ?? '';
    return isIP(bare) === 0 ? null : ipaddr.parse(bare).toNormalizedString();
  };
  const left = parse(a);
  return left !== null && left === parse(b);
}
