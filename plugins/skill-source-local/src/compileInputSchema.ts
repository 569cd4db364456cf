import { Ajv } from 'ajv';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';

/** The largest `input_schema` accepted, as JSON, in bytes. */
export const MAX_INPUT_SCHEMA_BYTES = 64 * 1024;

/** A compiled `input_schema`: `validate` lists `path: problem` lines, empty when the input fits. */
export interface CompiledInputSchema {
  validate(input: unknown): string[];
}

const cache = new Map<string, CompiledInputSchema>();

/**
 * Compiles a skill's `input_schema` with ajv (draft-07 by default, 2020-12 when `$schema` says so).
 * Returns a problem string instead when the schema is too large or does not compile. Remote `$ref`s
 * are never fetched. Compiled validators are cached by the schema's JSON.
 */
export function compileInputSchema(schema: Readonly<Record<string, unknown>>): CompiledInputSchema | string {
  const json = JSON.stringify(schema);
  if (json.length > MAX_INPUT_SCHEMA_BYTES) return `is ${json.length} bytes of JSON, more than the ${MAX_INPUT_SCHEMA_BYTES}-byte limit`;
  const cached = cache.get(json);
  if (cached) return cached;
  const is2020 = typeof schema.$schema === 'string' && schema.$schema.includes('2020-12');
  const options = { allErrors: true, strict: false, validateFormats: false } as const;
  let validateFn: ValidateFunction;
  try {
    validateFn = is2020 ? new Ajv2020(options).compile(schema) : new Ajv(options).compile(schema);
  } catch (error) {
    return `is not a usable JSON Schema: ${error instanceof Error ? error.message : String(error)}`;
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
