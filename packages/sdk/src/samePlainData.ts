/**
 * Whether two values of plain data (strings, numbers, booleans, null, arrays, plain objects and
 * byte arrays: what discovery records, what a config holds) are equal, key by key. Any other
 * object (a Date from a TOML date, a Map) is equal only to itself, so a cache that compares with
 * this never takes over what it cannot see into. `util.isDeepStrictEqual` answers
 * the same but allocates several times the compared data on the way (a live host compares 1,000
 * plugins' facts on every reload); this allocates nothing. Key order does not matter, as with
 * `canonicalJson` equality.
 */
export function samePlainData(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (a instanceof Uint8Array || b instanceof Uint8Array) {
    return a instanceof Uint8Array && b instanceof Uint8Array && Buffer.compare(a, b) === 0;
  }
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i += 1) if (!samePlainData(a[i], b[i])) return false;
    return true;
  }
  // Anything but a plain object (a TOML date is a Date, whose value is no own key) is equal only
  // to itself: two Dates with no keys are not the same date.
  const proto = Object.getPrototypeOf(a) as unknown;
  if ((proto !== Object.prototype && proto !== null) || Object.getPrototypeOf(b) !== proto) return false;
  // for…in rather than Object.keys: no key arrays.
  let count = 0;
  for (const key in a) {
    if (!Object.hasOwn(a, key)) continue;
    count += 1;
    if (!Object.hasOwn(b, key) || !samePlainData((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key])) return false;
  }
  for (const key in b) if (Object.hasOwn(b, key)) count -= 1;
  return count === 0;
}

/**
 * What `make()` made for `key` the last time, when the `inputs` it was made from are equal now
 * ({@link samePlainData}); otherwise `make()`'s new answer, kept for next time. For caches that
 * take over from one build to the next what the same inputs made.
 */
export function keptByInputs<K extends object, V>(
  kept: WeakMap<K, { readonly inputs: unknown; readonly value: V }>,
  key: K,
  inputs: unknown,
  make: () => V,
): V {
  const before = kept.get(key);
  if (before !== undefined && samePlainData(before.inputs, inputs)) return before.value;
  const value = make();
  kept.set(key, { inputs, value });
  return value;
}
