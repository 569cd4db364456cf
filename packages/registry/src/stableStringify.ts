/**
 * JSON with object keys sorted (by UTF-16 code units) at every level, no whitespace: the same
 * value always gives the same bytes. `undefined` members are dropped as JSON.stringify does;
 * values with `toJSON` (dates) use it. Throws on cycles and BigInt, like JSON.stringify — a bug.
 */
export function stableStringify(value: unknown): string {
  const out: string[] = [];
  write(value, out);
  return out.join('');
}

function write(value: unknown, out: string[]): void {
  if (value === null || typeof value !== 'object') {
    out.push(JSON.stringify(value) ?? 'null');
    return;
  }
  const withToJson = value as { toJSON?: () => unknown };
  if (typeof withToJson.toJSON === 'function') {
    write(withToJson.toJSON(), out);
    return;
  }
  if (Array.isArray(value)) {
    out.push('[');
    for (let i = 0; i < value.length; i += 1) {
      if (i > 0) out.push(',');
      const item: unknown = value[i];
      write(item === undefined || typeof item === 'function' || typeof item === 'symbol' ? null : item, out);
    }
    out.push(']');
    return;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).sort();
  out.push('{');
  let first = true;
  for (const key of keys) {
    const item = record[key];
    if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
    if (!first) out.push(',');
    first = false;
    out.push(JSON.stringify(key), ':');
    write(item, out);
  }
  out.push('}');
}
