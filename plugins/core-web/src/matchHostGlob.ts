import { compileGlob } from '@trellis/sdk/internal';

function normalizeHost(value: string): string {
  return value
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '');
}

/**
 * True when `host` matches the glob: case-insensitive, `*` matches any run of characters
 * (dots included), so `*.example.com` matches `a.b.example.com` but not `example.com`.
 * IPv6 hosts are compared without brackets, and a trailing dot is ignored on both sides.
 * Matching is the sdk's `compileGlob` (no regex, bounded by glob × host length).
 */
export function matchHostGlob(glob: string, host: string): boolean {
  return compileGlob(normalizeHost(glob), { ignoreCase: true })(normalizeHost(host));
}
