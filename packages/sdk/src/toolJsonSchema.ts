import { z } from 'zod';

/**
 * The JSON Schema of a tool's zod input (or output, or a plugin's settings), as the build embeds
 * it and the runtime validates against it: the input side (defaults optional), draft 2020-12,
 * without a `$schema` key.
 */
export function toolJsonSchema(schema: z.ZodType): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  delete json.$schema;
  return json;
}
