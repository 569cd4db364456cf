import { closestName } from '@trellis/sdk/internal';

/**
 * The known key closest to `unknown` by edit distance (case-insensitive, with `-` and `_` treated
 * alike), when it is close enough to be a plausible typo: at most 1 edit for keys up to 4
 * characters, else at most a third of the length (at most 3). `undefined` otherwise.
 */
export function suggestKey(unknown: string, known: readonly string[]): string | undefined {
  return closestName(unknown, known, {
    ignoreCase: true,
    foldSeparators: true,
    maxDistance: (wanted) => (wanted.length <= 4 ? 1 : Math.min(3, Math.floor(wanted.length / 3))),
  });
}
