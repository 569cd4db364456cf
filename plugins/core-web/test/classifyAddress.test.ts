import { describe, expect, it } from 'vitest';
import { METADATA_ADDRESSES, classifyAddress, inspectAddress, sameAddress } from '../src/classifyAddress.ts';
import { matchHostGlob } from '../src/matchHostGlob.ts';

describe('classifyAddress', () => {
  it.each([
    ['8.8.8.8', 'public'],
    ['93.184.216.34', 'public'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['172.32.0.1', 'public'],
    ['172.15.0.1', 'public'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'shared'],
    ['169.254.1.1', 'link-local'],
    ['169.254.169.254', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['febf::1', 'link-local'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['fd00:ec2::254', 'metadata'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['::ffff:0:0', 'unspecified'],
    ['::ffff:8.8.8.8', 'public'],
    ['::127.0.0.1', 'loopback'],
    ['64:ff9b::a00:1', 'private'],
    ['2002:7f00:1::', 'loopback'],
    ['2002:0808:0808::1', 'public'],
    ['2606:4700:4700::1111', 'public'],
    ['not-an-ip', 'invalid'],
  ])('%s is %s', (address, expected) => {
    expect(classifyAddress(address)).toBe(expected);
  });

  it.each([
    // Issue 12: the IPv4-translated form (::ffff:0:a.b.c.d, RFC 6145) passed as public.
    ['::ffff:0:127.0.0.1', 'loopback'],
    ['::ffff:0:7f00:1', 'loopback'],
    ['::ffff:0:10.1.2.3', 'private'],
    ['::ffff:0:169.254.169.254', 'metadata'],
    ['::ffff:0:8.8.8.8', 'public'],
    // Azure's wire server, a public-range address, and the other metadata endpoints.
    ['168.63.129.16', 'metadata'],
    ['169.254.170.2', 'metadata'],
    ['169.254.170.23', 'metadata'],
    ['192.0.0.192', 'metadata'],
    ['fd00:ec2::23', 'metadata'],
    ['fd20:ce::254', 'metadata'],
    ['::ffff:168.63.129.16', 'metadata'],
    // IPv4-compatible (deprecated), NAT64 well-known and local-use, 6to4, Teredo.
    ['::10.0.0.1', 'private'],
    ['::8.8.8.8', 'public'],
    ['64:ff9b::127.0.0.1', 'loopback'],
    ['64:ff9b::a9fe:a9fe', 'metadata'],
    ['64:ff9b::8.8.8.8', 'public'],
    ['64:ff9b:1::8.8.8.8', 'private'],
    ['2002:a9fe:a9fe::1', 'metadata'],
    ['2002:c0a8:0101::1', 'private'],
    // Teredo: server 65.54.227.120, client 127.0.0.1 inverted (80ff:fffe).
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'loopback'],
    // Teredo: server 10.0.0.1 (private), client 8.8.8.8 inverted (f7f7:f7f7).
    ['2001:0:a00:1:8000:63bf:f7f7:f7f7', 'private'],
    ['2001:0:4136:e378:8000:63bf:f7f7:f7f7', 'public'],
    // Special-purpose ranges the hand-written code did not know.
    ['192.0.2.1', 'reserved'],
    ['198.51.100.7', 'reserved'],
    ['203.0.113.9', 'reserved'],
    ['2001:db8::1', 'reserved'],
    ['100::1', 'reserved'],
    ['fec0::1', 'private'],
    // Spellings that are not plain addresses.
    ['127.1', 'invalid'],
    ['0x7f.0.0.1', 'invalid'],
    ['', 'invalid'],
  ])('%s is %s (embedded and special forms)', (address, expected) => {
    expect(classifyAddress(address)).toBe(expected);
  });

  it('names the embedding form and the IPv4 address it carries', () => {
    expect(inspectAddress('::ffff:0:7f00:1')).toEqual({ class: 'loopback', embedded: { form: 'IPv4-translated', ipv4: '127.0.0.1' } });
    expect(inspectAddress('[::ffff:a9fe:a9fe]')).toEqual({
      class: 'metadata',
      embedded: { form: 'IPv4-mapped', ipv4: '169.254.169.254' },
      service: METADATA_ADDRESSES[0]!.what,
    });
    expect(inspectAddress('2002:a00:1::')).toEqual({ class: 'private', embedded: { form: '6to4', ipv4: '10.0.0.1' } });
    expect(inspectAddress('2001:0:a00:1:8000:63bf:f7f7:f7f7')).toEqual({
      class: 'private',
      embedded: { form: 'Teredo', ipv4: '10.0.0.1' },
    });
    expect(inspectAddress('168.63.129.16')).toEqual({ class: 'metadata', service: 'Azure wire server (VM agent, health and DNS)' });
  });

  it('classifies every shipped metadata address as metadata, also inside each embedding form', () => {
    for (const { address } of METADATA_ADDRESSES) {
      expect({ address, cls: classifyAddress(address) }).toEqual({ address, cls: 'metadata' });
      if (!address.includes(':')) {
        const [a, b, c, d] = address.split('.').map(Number) as [number, number, number, number];
        const high = ((a << 8) | b).toString(16);
        const low = ((c << 8) | d).toString(16);
        for (const form of [`::ffff:${address}`, `::ffff:0:${address}`, `::${address}`, `64:ff9b::${address}`, `2002:${high}:${low}::1`]) {
          expect({ form, cls: classifyAddress(form) }).toEqual({ form, cls: 'metadata' });
        }
      }
    }
  });

  it('compares two spellings of one address', () => {
    expect(sameAddress('::ffff:127.0.0.1', '::ffff:7f00:1')).toBe(true);
    expect(sameAddress('[fd00:ec2::254]', 'fd00:ec2:0:0:0:0:0:254')).toBe(true);
    expect(sameAddress('127.0.0.1', '::ffff:127.0.0.1')).toBe(false);
    expect(sameAddress('not-an-ip', 'not-an-ip')).toBe(false);
  });
});

describe('matchHostGlob', () => {
  it.each([
    ['example.com', 'example.com', true],
    ['example.com', 'EXAMPLE.com.', true],
    ['example.com', 'www.example.com', false],
    ['*.example.com', 'www.example.com', true],
    ['*.example.com', 'a.b.example.com', true],
    ['*.example.com', 'example.com', false],
    ['*.example.com', 'evil-example.com', false],
    ['*', 'anything.at.all', true],
    ['127.0.0.1', '127.0.0.1', true],
    ['127.0.0.1', '127.0.0.10', false],
    ['::1', '[::1]', true],
    ['a*b*c', 'aXXbYYc', true],
    ['a*b*c', 'aXXbYY', false],
  ])('%s vs %s → %s', (glob, host, expected) => {
    expect(matchHostGlob(glob, host)).toBe(expected);
  });

  it('stays linear on pathological globs', () => {
    expect(matchHostGlob(`${'*a'.repeat(100)}b`, 'a'.repeat(253))).toBe(false);
  });
});
