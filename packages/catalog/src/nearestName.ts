import { closestName } from '@trellis/sdk/internal';

/**
 * The candidate closest to `name`: a candidate whose own name (after the first dot) equals `name`
 * when exactly one does, else the smallest edit distance within max(2, 40 % of the name's length),
 * ties broken alphabetically. Undefined when nothing is close.
 */
export function nearestName(name: string, candidates: readonly string[]): string | undefined {
  const byOwnName = candidates.filter((candidate) => candidate.slice(candidate.indexOf('.') + 1) === name);
  if (byOwnName.length === 1) return byOwnName[0];
  return closestName(name, candidates, { maxDistance: (wanted) => Math.max(2, Math.ceil(wanted.length * 0.4)) });
}
