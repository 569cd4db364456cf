/**
 * The environment a command gets: only the variables named in `allow` (an entry ending in `*`
 * is a prefix), taken from `env`. Unset variables are left out.
 */
export function reduceEnv(env: Readonly<Record<string, string | undefined>>, allow: readonly string[]): Record<string, string> {
  const reduced: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    if (value === undefined) continue;
    const allowed = allow.some((entry) => (entry.endsWith('*') ? key.startsWith(entry.slice(0, -1)) : key === entry));
    if (allowed) reduced[key] = value;
  }
  return reduced;
}
