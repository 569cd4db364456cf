const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/**
 * Merges `patch` over `base` into a new object: plain objects merge key by key, everything else
 * (arrays included) in the patch replaces the base value. Neither input is changed. Keys
 * `__proto__`, `constructor` and `prototype` are skipped, so a patch can never reach a prototype.
 */
export function deepMerge(base: Readonly<Record<string, unknown>>, patch: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(base)) {
    if (FORBIDDEN.has(key)) continue;
    out[key] = isPlainObject(value) ? deepMerge(value, {}) : value;
  }
  for (const [key, value] of Object.entries(patch)) {
    if (FORBIDDEN.has(key) || value === undefined) continue;
    const current = out[key];
    out[key] = isPlainObject(value) ? deepMerge(isPlainObject(current) ? current : {}, value) : value;
  }
  return out;
}
