import { sha256Hex } from './lazyCrypto.ts';

/**
 * JSON with object keys sorted (by UTF-16 code units) at every level, no whitespace: equal values
 * give equal text, whatever their key order. What `JSON.stringify` would write otherwise: `toJSON`
 * is used (TOML dates become ISO strings), `undefined`, function and symbol members are left out
 * and such array items become `null`, non-finite numbers become `null`. Iterative, so a deeply
 * nested value from an untrusted plugin cannot overflow the stack; a cycle throws a `TypeError`
 * (a cyclic value is not JSON data). The one canonical form behind every content hash in Trellis
 * (snapshot, manifest digests, schema caches, descriptor hashes).
 */
export function canonicalJson(value: unknown): string {
  const out: string[] = [];
  const onPath = new Set<object>();
  // Work items: a value to write, or a piece of text / a path exit, tagged to tell them apart.
  type Item = { readonly text: string } | { readonly leave: object } | { readonly value: unknown };
  const stack: Item[] = [{ value }];
  while (stack.length > 0) {
    const item = stack.pop()!;
    if ('text' in item) {
      out.push(item.text);
      continue;
    }
    if ('leave' in item) {
      onPath.delete(item.leave);
      continue;
    }
    const current = item.value;
    if (current === null || typeof current !== 'object') {
      out.push(JSON.stringify(current) ?? 'null');
      continue;
    }
    const withToJson = current as { toJSON?: () => unknown };
    if (typeof withToJson.toJSON === 'function') {
      stack.push({ value: withToJson.toJSON() });
      continue;
    }
    if (onPath.has(current)) throw new TypeError('canonicalJson: the value contains a cycle');
    onPath.add(current);
    stack.push({ leave: current });
    if (Array.isArray(current)) {
      stack.push({ text: ']' });
      for (let index = current.length - 1; index >= 0; index -= 1) {
        stack.push({ value: current[index] });
        if (index > 0) stack.push({ text: ',' });
      }
      stack.push({ text: '[' });
      continue;
    }
    const record = current as Record<string, unknown>;
    const keys = Object.keys(record)
      .filter((key) => isJsonMember(record[key]))
      .sort();
    stack.push({ text: '}' });
    for (let index = keys.length - 1; index >= 0; index -= 1) {
      const key = keys[index]!;
      stack.push({ value: record[key] });
      stack.push({ text: `${index > 0 ? ',' : ''}${JSON.stringify(key)}:` });
    }
    stack.push({ text: '{' });
  }
  return out.join('');
}

/** Whether `JSON.stringify` writes an object member with this value (it skips the others). */
function isJsonMember(value: unknown): boolean {
  return value !== undefined && typeof value !== 'function' && typeof value !== 'symbol';
}

/** sha256 (hex) of {@link canonicalJson}. */
export function hashJson(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}
