// `@trellis/runtime/validation`: the ajv + re2js validator the runtime loads with the first call.
export { createSchemaValidatorCache, formatSchemaError } from './SchemaValidatorCache.ts';
