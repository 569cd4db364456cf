/**
 * True when `value` holds an object or array `maxDepth` or more levels below itself (`value` is
 * level 0): `nestsDeeperThan({ a: {} }, 1)` is true, `nestsDeeperThan({ a: 1 }, 1)` is false.
 * The walk recurses no deeper than `maxDepth`, so data nested a million levels deep cannot exhaust
 * the stack; `maxDepth` itself is a limit of tens or hundreds, not of millions. A Date (a TOML date
 * or time) is a value, not a level.
 */
export function nestsDeeperThan(value: unknown, maxDepth: number): boolean {
  if (value === null || typeof value !== 'object' || value instanceof Date) return false;
  if (maxDepth <= 0) return true;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i += 1) if (nestsDeeperThan(value[i], maxDepth - 1)) return true;
    return false;
  }
  const record = value as Record<string, unknown>;
  for (const key in record) if (Object.hasOwn(record, key) && nestsDeeperThan(record[key], maxDepth - 1)) return true;
  return false;
}
