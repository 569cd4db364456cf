import type { PluginManifest } from '@trellis/sdk';

/**
 * A string value to keep. TOML parsers hand out substrings of the whole document, and V8 keeps a
 * substring of 13 or more characters as a slice that holds on to the document it was cut from:
 * one long description would keep the manifest's whole text alive for as long as the snapshot
 * lives. The copy is flat (the concatenation is flattened before it is sliced again), so it holds
 * only its own characters. Shorter substrings are copies already.
 */
function own(value: string): string {
  return value.length < 13 ? value : (' ' + value).slice(1);
}

// Deeper data is not copied: parseManifest's depth check rejects it (dotted keys can nest far
// deeper than any real schema, and this copy recurses).
const COPY_DEPTH = 40;

/**
 * The manifest zod returned, as plain objects and arrays (zod passes the parser's null-prototype
 * tables through in the free-form JSON Schemas) whose strings are the manifest's own, so a kept
 * manifest holds no document text alive. A TOML date in a schema stays as zod gave it.
 */
export function ownedManifest(manifest: PluginManifest): PluginManifest {
  return ownedCopy(manifest, 0) as PluginManifest;
}

function ownedCopy(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return own(value);
  if (typeof value !== 'object' || value === null || depth > COPY_DEPTH) return value;
  if (Array.isArray(value)) return value.map((item: unknown) => ownedCopy(item, depth + 1));
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype !== null && prototype !== Object.prototype) return value;
  const out: Record<string, unknown> = {};
  for (const key in value) {
    // Not reachable (the parser refuses the key), and copying it would set the prototype.
    if (key === '__proto__') return value;
    out[key] = ownedCopy((value as Record<string, unknown>)[key], depth + 1);
  }
  return out;
}
