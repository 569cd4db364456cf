/**
 * The known key closest to `unknown` by edit distance (case-insensitive, with `-` and `_` treated
 * alike), when it is close enough to be a plausible typo: at most 1 edit for keys up to 4
 * characters, else at most a third of the length (at most 3). `undefined` otherwise.
 */
export function suggestKey(unknown: string, known: readonly string[]): string | undefined {
  const wanted = normalize(unknown);
  const limit = wanted.length <= 4 ? 1 : Math.min(3, Math.floor(wanted.length / 3));
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const candidate of known) {
    const d = editDistance(wanted, normalize(candidate), bestDistance);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

function normalize(key: string): string {
  return key.toLowerCase().replace(/-/g, '_');
}

/** Optimal string alignment distance (Levenshtein plus adjacent swaps), giving up past `cap`. */
export function editDistance(a: string, b: string, cap = Number.POSITIVE_INFINITY): number {
  if (Math.abs(a.length - b.length) >= cap) return cap;
  if (a.length > 256 || b.length > 256) return a === b ? 0 : cap;
  let prevPrev: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min((prev[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, (prevPrev[j - 2] ?? 0) + 1);
      row.push(d);
      rowMin = Math.min(rowMin, d);
    }
    if (rowMin >= cap) return cap;
    prevPrev = prev;
    prev = row;
  }
  return prev[b.length] ?? cap;
}
