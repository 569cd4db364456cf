import { z } from 'zod';
import { RuntimeConfigSchema } from './RuntimeConfigSchema.ts';

/**
 * The JSON Schema of `runtime.toml` as written (input side: every key optional where a default
 * exists), for editor completion, e.g. with Taplo or Even Better TOML. Built on each call.
 */
export function runtimeConfigJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(RuntimeConfigSchema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return {
    ...schema,
    $id: 'https://trellis.dev/schema/runtime.schema.json',
    title: 'Trellis runtime.toml',
    description: 'The Trellis runtime configuration: which plugins run and how tools run.',
  };
}
