import { ERROR_CODES, type ToolFailure } from '@trellis/sdk';

/**
 * Checks that a tool's result serializes to JSON and fits the output cap. Returns undefined when it
 * does; else the failure. JSON.stringify catches cycles and BigInt; a walk afterwards catches
 * functions and symbols, which JSON would silently drop. Objects with `toJSON` are taken as they
 * serialize.
 */
export function checkOutput(value: unknown, tool: string, maxBytes: number): ToolFailure | undefined {
  const type = typeof value;
  if (value === null || value === undefined || type === 'boolean' || type === 'number') return undefined;
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
  // String length is a lower bound on UTF-8 bytes; measure exactly only near the cap.
  if (json.length * 3 > maxBytes) {
    const bytes = Buffer.byteLength(json, 'utf8');
    if (bytes > maxBytes) {
      return {
        code: ERROR_CODES.OUTPUT_TOO_LARGE,
        message: `${tool} returned ${bytes} bytes of JSON, more than [runtime] max_output_bytes = ${maxBytes}; ask for less (a smaller limit or range) or raise the cap`,
        retryable: false,
      };
    }
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
