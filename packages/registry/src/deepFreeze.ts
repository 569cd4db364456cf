/** Freezes a plain value and everything in it (arrays and plain objects); returns it. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i += 1) {
        const child: unknown = value[i];
        if (child !== null && typeof child === 'object') deepFreeze(child);
      }
    } else {
      const record = value as Record<string, unknown>;
      const keys = Object.keys(record);
      for (let i = 0; i < keys.length; i += 1) {
        const child = record[keys[i]!];
        if (child !== null && typeof child === 'object') deepFreeze(child);
      }
    }
  }
  return value;
}
