/** Levenshtein distance between two strings (insertions, deletions, substitutions), by UTF-16 unit. */
export function editDistance(left: string, right: string): number {
  if (left === right) return 0;
  if (left.length === 0) return right.length;
  if (right.length === 0) return left.length;
  let previous = Array.from({ length: right.length + 1 }, (_, index) => index);
  let current = new Array<number>(right.length + 1).fill(0);
  for (let i = 1; i <= left.length; i += 1) {
    current[0] = i;
    for (let j = 1; j <= right.length; j += 1) {
      const cost = left.charCodeAt(i - 1) === right.charCodeAt(j - 1) ? 0 : 1;
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
    }
    [previous, current] = [current, previous];
  }
  return previous[right.length]!;
}

/**
 * The candidate closest to `name`: a candidate whose own name (after the first dot) equals `name`
 * when exactly one does, else the smallest edit distance within max(2, 40 % of the name's length),
 * ties broken alphabetically. Undefined when nothing is close.
 */
export function nearestName(name: string, candidates: readonly string[]): string | undefined {
  const byOwnName = candidates.filter((candidate) => candidate.slice(candidate.indexOf('.') + 1) === name);
  if (byOwnName.length === 1) return byOwnName[0];
  const limit = Math.max(2, Math.ceil(name.length * 0.4));
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    if (Math.abs(candidate.length - name.length) > limit) continue;
    const distance = editDistance(name, candidate);
    if (distance > limit) continue;
    if (distance < bestDistance || (distance === bestDistance && best !== undefined && candidate < best)) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}
