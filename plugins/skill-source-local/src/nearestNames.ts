/** Up to `limit` of `names` closest to `wanted` by edit distance (case-insensitive), nearest first; only plausible ones. */
export function nearestNames(wanted: string, names: Iterable<string>, limit = 3): string[] {
  const target = wanted.toLowerCase();
  const scored: Array<{ name: string; distance: number }> = [];
  for (const name of new Set(names)) {
    const lower = name.toLowerCase();
    const distance = lower.includes(target) || target.includes(lower) ? 1 : editDistance(target, lower);
    if (distance <= Math.max(2, Math.floor(Math.max(target.length, lower.length) / 3))) scored.push({ name, distance });
  }
  return scored
    .sort((a, b) => a.distance - b.distance || (a.name < b.name ? -1 : 1))
    .slice(0, limit)
    .map((s) => s.name);
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}
