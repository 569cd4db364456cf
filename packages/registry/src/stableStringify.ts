/**
 * JSON with object keys sorted (by UTF-16 code units) at every level, no whitespace: the same
 * value always gives the same bytes. `undefined` members are dropped as JSON.stringify does;
 * values with `toJSON` (dates) use it. Throws on cycles and BigInt, like JSON.stringify — a bug.
 */
export function stableStringify(value: unknown): string {
  return write(value, 0);
}

// Deeper than this is a cycle or a bug: manifests are capped far below it.
const MAX_DEPTH = 256;

function write(value: unknown, depth: number): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      break;
    default:
      return 'null';
  }
  if (value === null) return 'null';
  if (depth > MAX_DEPTH) throw new TypeError('stableStringify: value nests too deeply (a cycle?)');
  const withToJson = value as { toJSON?: () => unknown };
  if (typeof withToJson.toJSON === 'function') return write(withToJson.toJSON(), depth + 1);
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i += 1) {
      if (i > 0) out += ',';
      const item: unknown = value[i];
      out += item === undefined || typeof item === 'function' || typeof item === 'symbol' ? 'null' : write(item, depth + 1);
    }
    return `${out}]`;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  let sorted = true;
  for (let i = 1; i < keys.length; i += 1) {
    if (keys[i - 1]! > keys[i]!) {
      sorted = false;
      break;
    }
  }
  if (!sorted) keys.sort();
  let out = '{';
  let first = true;
  for (const key of keys) {
    const item = record[key];
    if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
    out += `${first ? '' : ','}${JSON.stringify(key)}:${write(item, depth + 1)}`;
    first = false;
  }
  return `${out}}`;
}
