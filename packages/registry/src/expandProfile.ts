import type { ProfilesData } from './types.ts';

/**
 * The profile names a profile stands for: itself and, transitively, everything it includes
 * (cycle-safe), in breadth-first order. A plugin with `profile = "p"` is in profile `q` when `p`
 * is in `expandProfile(profiles, q)`.
 */
export function expandProfile(profiles: ProfilesData, name: string): string[] {
  const out: string[] = [];
  const queue = [name];
  while (queue.length > 0) {
    const next = queue.shift()!;
    if (out.includes(next)) continue;
    out.push(next);
    queue.push(...(profiles[next]?.includes ?? []));
  }
  return out;
}
