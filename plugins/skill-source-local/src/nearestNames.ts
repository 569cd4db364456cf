import { closestNames } from '@trellis/sdk/internal';

/** Up to `limit` of `names` closest to `wanted` by edit distance (case-insensitive), nearest first; only plausible ones. */
export function nearestNames(wanted: string, names: Iterable<string>, limit = 3): string[] {
  return closestNames(wanted, names, {
    ignoreCase: true,
    containment: true,
    maxDistance: (target, name) => Math.max(2, Math.floor(Math.max(target.length, name.length) / 3)),
    limit,
  });
}
