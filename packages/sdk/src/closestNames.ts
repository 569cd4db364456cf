import { distance } from 'fastest-levenshtein';

/** How `closestNames` compares names and which ones it counts as close. */
export interface ClosestNamesOptions {
  /** Compare lower-cased names (`Allow` finds `allow`). Default false. */
  readonly ignoreCase?: boolean;
  /** Treat `-` and `_` as the same character (`tool-timeout` finds `tool_timeout`). Default false. */
  readonly foldSeparators?: boolean;
  /** Count a name that contains the wanted one, or is contained in it, as one edit away. Default false. */
  readonly containment?: boolean;
  /**
   * The most edits a plausible typo may be, given the two compared (normalized) strings. Default:
   * `max(2, floor(wanted.length / 3))`.
   */
  readonly maxDistance?: (wanted: string, candidate: string) => number;
  /** How many names to return at most. Default: all that are close enough. */
  readonly limit?: number;
}

function defaultMaxDistance(wanted: string): number {
  return Math.max(2, Math.floor(wanted.length / 3));
}

/**
 * The `candidates` close enough to `wanted` to be what a user meant ("did you mean …?"), nearest
 * first, ties in code-unit order, each name once. Distance is Levenshtein (insertions, deletions,
 * substitutions by UTF-16 unit) after the normalization `options` ask for.
 */
export function closestNames(wanted: string, candidates: Iterable<string>, options: ClosestNamesOptions = {}): string[] {
  const normalize = (name: string): string => {
    const cased = options.ignoreCase === true ? name.toLowerCase() : name;
    return options.foldSeparators === true ? cased.replaceAll('-', '_') : cased;
  };
  const maxDistance = options.maxDistance ?? defaultMaxDistance;
  const target = normalize(wanted);
  const scored: Array<{ name: string; distance: number }> = [];
  for (const name of new Set(candidates)) {
    const other = normalize(name);
    const limit = maxDistance(target, other);
    if (options.containment !== true && Math.abs(other.length - target.length) > limit) continue; // distance ≥ length gap
    const measured =
      other === target
        ? 0
        : options.containment === true && (other.includes(target) || target.includes(other))
          ? 1
          : distance(target, other);
    if (measured <= limit) scored.push({ name, distance: measured });
  }
  scored.sort((a, b) => a.distance - b.distance || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return scored.slice(0, options.limit ?? scored.length).map((entry) => entry.name);
}

/** The one candidate nearest to `wanted` (see `closestNames`), or undefined when none is close. */
export function closestName(wanted: string, candidates: Iterable<string>, options: ClosestNamesOptions = {}): string | undefined {
  return closestNames(wanted, candidates, { ...options, limit: 1 })[0];
}
