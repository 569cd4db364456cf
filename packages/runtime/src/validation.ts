// `@trellis/runtime/validation`: the ajv + re2js validator the runtime loads with the first call.
export { createSchemaValidatorCache, formatSchemaError, validatorOptions } from './SchemaValidatorCache.ts';
export { precompiledSchema } from './schemaCheck.ts';
