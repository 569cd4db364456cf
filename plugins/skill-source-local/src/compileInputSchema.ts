import { Ajv } from 'ajv';
import type { ErrorObject, Options, ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { linearRegExp, UnsupportedPatternError } from '@trellis/sdk/linear-regexp';

/** The largest `input_schema` accepted, as JSON, in bytes. */
export const MAX_INPUT_SCHEMA_BYTES = 64 * 1024;

/** The deepest nesting of objects and arrays accepted in an `input_schema` (as the runtime allows for tool schemas). */
export const MAX_INPUT_SCHEMA_DEPTH = 32;

/** A compiled `input_schema`: `validate` lists `path: problem` lines, empty when the input fits. */
export interface CompiledInputSchema {
  validate(input: unknown): string[];
}

const cache = new Map<string, CompiledInputSchema>();

/**
 * Compiles a skill's `input_schema` with ajv (draft-07 by default, 2020-12 when `$schema` says so).
 * SKILL.md files are untrusted, so the schema is held to the limits the runtime applies to tool
 * schemas: at most {@link MAX_INPUT_SCHEMA_DEPTH} levels and {@link MAX_INPUT_SCHEMA_BYTES}, and
 * `pattern`/`patternProperties` run on re2js (linear time), never on the backtracking RegExp.
 * Returns a problem (what is wrong and how to fix it) instead when the schema breaks a limit, has a
 * pattern re2 cannot run, or does not compile. Remote `$ref`s are never fetched. Compiled
 * validators are cached by the schema's JSON.
 */
export function compileInputSchema(schema: Readonly<Record<string, unknown>>): CompiledInputSchema | string {
  const tooDeepAt = findTooDeep(schema, MAX_INPUT_SCHEMA_DEPTH);
  if (tooDeepAt !== undefined) {
    return `nests deeper than ${MAX_INPUT_SCHEMA_DEPTH} levels (at ${tooDeepAt}); flatten it`;
  }
  const json = JSON.stringify(schema);
  if (json.length > MAX_INPUT_SCHEMA_BYTES) {
    return `is ${json.length} bytes of JSON, more than the ${MAX_INPUT_SCHEMA_BYTES}-byte limit; shorten it`;
  }
  const cached = cache.get(json);
  if (cached) return cached;
  const is2020 = typeof schema.$schema === 'string' && schema.$schema.includes('2020-12');
  const options: Options = { allErrors: true, strict: false, validateFormats: false, code: { regExp: linearRegExp } };
  let validateFn: ValidateFunction;
  try {
    validateFn = is2020 ? new Ajv2020(options).compile(schema) : new Ajv(options).compile(schema);
  } catch (error) {
    if (error instanceof UnsupportedPatternError) {
      const at = findPattern(schema, error.pattern);
      return `${error.message}${at === undefined ? '' : ` (at ${at})`}; rewrite it in RE2 syntax, without backreferences or lookaround`;
    }
    return `is not a usable JSON Schema: ${error instanceof Error ? error.message : String(error)}; fix it`;
  }
  const compiled: CompiledInputSchema = {
    validate(input) {
      if (validateFn(input)) return [];
      return (validateFn.errors ?? []).map(formatAjvError);
    },
  };
  if (cache.size > 256) cache.clear();
  cache.set(json, compiled);
  return compiled;
}

/** The JSON Pointer of the first object or array nested deeper than `maxDepth`; the walk stops there, so it cannot exhaust the stack. */
function findTooDeep(node: unknown, maxDepth: number, depth = 0, at = ''): string | undefined {
  if (node === null || typeof node !== 'object') return undefined;
  if (depth > maxDepth) return at || '(root)';
  const entries: Array<[string, unknown]> = Array.isArray(node) ? node.map((item, index) => [String(index), item]) : Object.entries(node);
  for (const [key, value] of entries) {
    const found = findTooDeep(value, maxDepth, depth + 1, `${at}/${escapePointer(key)}`);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Where `pattern` appears as a `pattern` value or a `patternProperties` key (the schema is already known to be shallow). */
function findPattern(node: unknown, pattern: string, at = ''): string | undefined {
  if (node === null || typeof node !== 'object') return undefined;
  if (Array.isArray(node)) {
    for (const [index, item] of node.entries()) {
      const found = findPattern(item, pattern, `${at}/${index}`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  for (const [key, value] of Object.entries(node)) {
    const here = `${at}/${escapePointer(key)}`;
    if (key === 'pattern' && value === pattern) return here;
    if (key === 'patternProperties' && value !== null && typeof value === 'object' && Object.hasOwn(value, pattern)) {
      return `${here}/${escapePointer(pattern)}`;
    }
    const found = findPattern(value, pattern, here);
    if (found !== undefined) return found;
  }
  return undefined;
}

function escapePointer(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1');
}

function formatAjvError(error: ErrorObject): string {
  const path = `input${error.instancePath.replace(/\//g, '.')}`;
  if (error.keyword === 'additionalProperties') {
    return `${path}: unknown property ${JSON.stringify((error.params as { additionalProperty: string }).additionalProperty)}`;
  }
  if (error.keyword === 'enum') {
    return `${path}: must be one of ${(error.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
  }
  return `${path}: ${error.message ?? error.keyword}`;
}
