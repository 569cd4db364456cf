import type { ErrorObject, ValidateFunction } from 'ajv';
import type { CompiledSchema } from './SchemaValidatorCache.ts';

/** Most error lines shown to a model for one call. */
const MAX_ERROR_LINES = 20;

/**
 * A validator compiled ahead of time (`trellis build` writes one per bundled tool with ajv's
 * standalone code, from the options the runtime compiles trusted schemas with), as the runtime
 * uses it. Loads nothing: ajv itself is never imported for such a schema.
 */
export interface PrecompiledValidator {
  /** The generated validate function (ajv standalone code). */
  readonly validate: (data: unknown) => boolean;
  /** Hex sha256 of the schema's canonical JSON, as the runtime's cache would key it. */
  readonly hash: string;
  /** True when the schema has `default`s, which the validator fills in. */
  readonly fillsDefaults: boolean;
}

/** A precompiled validator as a compiled schema, checking exactly as a runtime-compiled one. */
export function precompiledSchema(validator: PrecompiledValidator): CompiledSchema {
  const validate = validator.validate as ValidateFunction;
  return { ok: true, hash: validator.hash, fillsDefaults: validator.fillsDefaults, check: (data) => runValidate(validate, data) };
}

/** Validates; undefined when valid, else at most 20 `path: message` lines. */
export function runValidate(validate: ValidateFunction, data: unknown): readonly string[] | undefined {
  if (validate(data)) return undefined;
  const errors = validate.errors ?? [];
  const lines = errors.slice(0, MAX_ERROR_LINES).map(formatSchemaError);
  if (errors.length > MAX_ERROR_LINES) lines.push(`… and ${errors.length - MAX_ERROR_LINES} more`);
  return lines;
}

/** One ajv error as `path: message`, with the offending property or allowed values named. */
export function formatSchemaError(error: ErrorObject): string {
  const path = error.instancePath === '' ? '(root)' : error.instancePath;
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'additionalProperties':
      return `${path}: must NOT have additional property '${String(params.additionalProperty)}'`;
    case 'unevaluatedProperties':
      return `${path}: must NOT have unevaluated property '${String(params.unevaluatedProperty)}'`;
    case 'enum':
      return `${path}: must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'const':
      return `${path}: must be ${JSON.stringify(params.allowedValue)}`;
    default:
      return `${path}: ${error.message ?? 'is invalid'}`;
  }
}
