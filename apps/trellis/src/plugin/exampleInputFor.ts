/**
 * A small input that satisfies a JSON Schema's usual shapes, for `trellis plugin test` when a tool
 * has no example: `default`/`const`/`examples`/first `enum` value when given, else a placeholder by
 * type; objects get their required properties. Depth-limited; not a general schema solver.
 */
export function exampleInputFor(schema: unknown, depth = 0): unknown {
  if (typeof schema !== 'object' || schema === null || depth > 8) return {};
  const s = schema as Record<string, unknown>;
  if ('default' in s) return s.default;
  if ('const' in s) return s.const;
  if (Array.isArray(s.examples) && s.examples.length > 0) return s.examples[0];
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0];
  for (const key of ['anyOf', 'oneOf'] as const) {
    const options = s[key];
    if (Array.isArray(options) && options.length > 0) return exampleInputFor(options[0], depth + 1);
  }
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  switch (type) {
    case 'string': {
      const min = typeof s.minLength === 'number' ? s.minLength : 0;
      return 'example'.padEnd(min, 'x');
    }
    case 'integer':
    case 'number':
      return typeof s.minimum === 'number' ? s.minimum : typeof s.exclusiveMinimum === 'number' ? s.exclusiveMinimum + 1 : 1;
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'array': {
      const min = typeof s.minItems === 'number' ? s.minItems : 0;
      return Array.from({ length: min }, () => exampleInputFor(s.items, depth + 1));
    }
    default: {
      const properties = (typeof s.properties === 'object' && s.properties !== null ? s.properties : {}) as Record<string, unknown>;
      const required = Array.isArray(s.required) ? (s.required as unknown[]).filter((k): k is string => typeof k === 'string') : [];
      return Object.fromEntries(required.map((key) => [key, exampleInputFor(properties[key], depth + 1)]));
    }
  }
}
