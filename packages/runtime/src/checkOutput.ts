import { ERROR_CODES, type ToolFailure } from '@trellis/sdk';

/**
 * Checks that a tool's result serializes to JSON and fits the output cap. Returns undefined when it
 * does; else the failure. The fast path walks the value once for an upper bound of its JSON size
 * (no string is built); only a value it cannot vouch for — over the bound, a cycle, a BigInt, a
 * function or symbol, an object with `toJSON`, deep nesting — takes the exact path:
 * `JSON.stringify` (catches cycles and BigInt), then a walk for functions and symbols, which JSON
 * would silently drop, then the exact UTF-8 size.
 */
export function checkOutput(value: unknown, tool: string, maxBytes: number): ToolFailure | undefined {
  const type = typeof value;
  if (value === null || value === undefined || type === 'boolean' || type === 'number') return undefined;
  let bound: number;
  try {
    bound = jsonBound(value, 0, []);
  } catch {
    bound = SLOW; // a getter threw: let the exact path report it
  }
  if (bound !== SLOW && bound <= maxBytes) return undefined;
  return checkOutputExactly(value, tool, maxBytes);
}

const SLOW = -1;
const MAX_FAST_DEPTH = 64;
// An upper bound on the UTF-8 bytes of JSON.stringify(value), or SLOW. A UTF-16 unit becomes at
// most 6 bytes (`\uXXXX`), a number at most 24 characters. `ancestors`: the objects on the path
// from the root, for cycles.
function jsonBound(value: unknown, depth: number, ancestors: object[]): number {
  switch (typeof value) {
    case 'string':
      return value.length * 6 + 2;
    case 'number':
      return 24;
    case 'boolean':
      return 5;
    case 'undefined':
      return 4;
    case 'object': {
      if (value === null) return 4;
      if (depth > MAX_FAST_DEPTH || typeof (value as { toJSON?: unknown }).toJSON === 'function' || ancestors.includes(value)) return SLOW;
      ancestors.push(value);
      let total = 2;
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) {
          const item = jsonBound(value[i], depth + 1, ancestors);
          if (item === SLOW) return SLOW;
          total += item + 1;
        }
      } else {
        for (const key in value) {
          if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
          const item = jsonBound((value as Record<string, unknown>)[key], depth + 1, ancestors);
          if (item === SLOW) return SLOW;
          total += key.length * 6 + 4 + item;
        }
      }
      ancestors.pop();
      return total;
    }
    default:
      return SLOW; // bigint, function, symbol
  }
}

function checkOutputExactly(value: unknown, tool: string, maxBytes: number): ToolFailure | undefined {
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
    return notSerializable(tool, reason ?? 'unknown reason');
  }
  if (json === undefined) {
    if (value === undefined) return undefined;
    return notSerializable(tool, `the result is ${typeof value === 'function' ? 'a function' : typeof value}`);
  }
  const found = findUnserializable(value, 0);
  if (found !== undefined) return notSerializable(tool, `${found.path} is a ${found.type}`);
  const bytes = Buffer.byteLength(json, 'utf8');
  if (bytes > maxBytes) {
    return {
      code: ERROR_CODES.OUTPUT_TOO_LARGE,
      message: `${tool} returned ${bytes} bytes of JSON, more than [runtime] max_output_bytes = ${maxBytes}; ask for less (a smaller limit or range) or raise the cap`,
      retryable: false,
    };
  }
  return undefined;
}

function notSerializable(tool: string, reason: string): ToolFailure {
  return {
    code: ERROR_CODES.OUTPUT_NOT_SERIALIZABLE,
    message: `${tool} returned a result that cannot be serialized to JSON: ${reason} (a bug in the tool)`,
    retryable: false,
  };
}

interface Found {
  path: string;
  type: string;
}

// Returns where a function or symbol sits, building the path only on the way out of a hit.
function findUnserializable(value: unknown, depth: number): Found | undefined {
  if (value === null || typeof value !== 'object' || depth > 1000) return undefined;
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = check(value[i], depth);
      if (found !== undefined) return { path: `/${i}${found.path}`, type: found.type };
    }
    return undefined;
  }
  for (const key in value) {
    if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
    const found = check((value as Record<string, unknown>)[key], depth);
    if (found !== undefined) return { path: `/${key}${found.path}`, type: found.type };
  }
  return undefined;
}

function check(item: unknown, depth: number): Found | undefined {
  const type = typeof item;
  if (type === 'function' || type === 'symbol') return { path: '', type };
  if (type === 'object' && item !== null) return findUnserializable(item, depth + 1);
  return undefined;
}
