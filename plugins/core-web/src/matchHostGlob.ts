function normalizeHost(value: string): string {
  return value.toLowerCase().replace(/^\[|\]$/g, '').replace(/\.$/, '');
}

/**
 * True when `host` matches the glob: case-insensitive, `*` matches any run of characters
 * (dots included), so `*.example.com` matches `a.b.example.com` but not `example.com`.
 * IPv6 hosts are compared without brackets. Linear-time wildcard matching (no regex).
 */
export function matchHostGlob(glob: string, host: string): boolean {
  const p = normalizeHost(glob);
  const s = normalizeHost(host);
  let pi = 0;
  let si = 0;
  let star = -1;
  let mark = 0;
  while (si < s.length) {
    if (pi < p.length && p[pi] !== '*' && p[pi] === s[si]) {
      pi += 1;
      si += 1;
    } else if (pi < p.length && p[pi] === '*') {
      star = pi;
      mark = si;
      pi += 1;
    } else if (star !== -1) {
      pi = star + 1;
      mark += 1;
      si = mark;
    } else {
      return false;
    }
  }
  while (pi < p.length && p[pi] === '*') pi += 1;
  return pi === p.length;
}
