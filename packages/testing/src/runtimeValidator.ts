import type { z } from 'zod';
import { createSchemaValidatorCache } from '@trellis/runtime/validation';
import { type ToolDefinition } from '@trellis/sdk';
import { toolJsonSchema } from '@trellis/sdk/schema';

const cache = createSchemaValidatorCache();

/**
 * Validates input exactly as a running host would: the JSON Schema the build generates from the
 * zod schema, compiled by the runtime's own validator (ajv, defaults filled, patterns on re2js).
 * Accepts a zod schema or a whole tool (its `input`). Throws when the schema cannot be used.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function runtimeValidator(schemaOrTool: z.ZodType | ToolDefinition<any, any, any>): (input: unknown) => boolean {
  const schema = 'run' in schemaOrTool && 'input' in schemaOrTool ? schemaOrTool.input : (schemaOrTool as z.ZodType);
  const compiled = cache.get(toolJsonSchema(schema));
  if (!compiled.ok) throw new Error(`the runtime refuses this schema: ${compiled.problem}`);
  return (input) => compiled.check(structuredClone(input)) === undefined;
}

/** For each input, whether zod and the runtime accept it, as `[zod, runtime]` pairs. */
export function agreement(schema: z.ZodType, inputs: readonly unknown[]): Array<[boolean, boolean]> {
  const validate = runtimeValidator(schema);
  return inputs.map((input) => [schema.safeParse(input).success, validate(input)]);
}
