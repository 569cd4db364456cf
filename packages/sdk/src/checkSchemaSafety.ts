/** Limits on untrusted JSON Schemas. */
export interface SchemaLimits {
  /** Deepest nesting of objects and arrays in the schema document. */
  readonly maxDepth: number;
  /** Largest schema, as serialized JSON, in bytes. */
  readonly maxBytes: number;
}

/** The defaults: 32 levels, 256 KiB. Generous for real tools, small enough to compile quickly. */
export const DEFAULT_SCHEMA_LIMITS: SchemaLimits = { maxDepth: 32, maxBytes: 256 * 1024 };

/** What `checkSchemaSafety` found: a problem to report, and whether the schema fills in defaults. */
export interface SchemaSafety {
  readonly problem?: string;
  readonly hasDefaults: boolean;
}

const REF_KEYWORDS = new Set(['$ref', '$dynamicRef', '$recursiveRef']);
// Values under these keywords are data, not schemas: a `$ref` key inside them is not a reference.
const DATA_KEYWORDS = new Set(['enum', 'const', 'default', 'examples']);

/**
 * Checks a schema before it is compiled: nesting depth and references (the caller checks size on
 * the JSON it serializes anyway). Only references inside the schema itself are allowed (`#...`,
 * or an `$id` the schema declares); anything else would make the validator fetch or resolve a
 * document the plugin does not control. The walk stops at the depth limit, so a hostile schema
 * cannot exhaust the stack.
 */
export function checkSchemaSafety(schema: unknown, limits: SchemaLimits = DEFAULT_SCHEMA_LIMITS): SchemaSafety {
  const refs: Array<{ keyword: string; value: string; at: string }> = [];
  const ids = new Set<string>();
  let hasDefaults = false;
  let tooDeep: string | undefined;

  const walk = (node: unknown, depth: number, at: string): void => {
    if (tooDeep !== undefined || node === null || typeof node !== 'object') return;
    if (depth > limits.maxDepth) {
      tooDeep = at || '(root)';
      return;
    }
    if (Array.isArray(node)) {
      node.forEach((item, index) => walk(item, depth + 1, `${at}/${index}`));
      return;
    }
    for (const [key, value] of Object.entries(node as Record<string, unknown>)) {
      if (REF_KEYWORDS.has(key) && typeof value === 'string') refs.push({ keyword: key, value, at: `${at}/${key}` });
      if (key === '$id' && typeof value === 'string') ids.add(value);
      if (key === 'default') hasDefaults = true;
      if (DATA_KEYWORDS.has(key)) continue;
      walk(value, depth + 1, `${at}/${escapePointer(key)}`);
    }
  };
  walk(schema, 0, '');

  if (tooDeep !== undefined) {
    return { problem: `the schema nests deeper than ${limits.maxDepth} levels (at ${tooDeep})`, hasDefaults };
  }
  for (const ref of refs) {
    if (ref.value.startsWith('#')) continue;
    const base = ref.value.split('#')[0] ?? '';
    if (ids.has(base) || ids.has(ref.value)) continue;
    return {
      problem: `${ref.at} refers to '${ref.value}', outside the schema; only local references (#/...) are allowed`,
      hasDefaults,
    };
  }
  return { hasDefaults };
}

function escapePointer(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1');
}
