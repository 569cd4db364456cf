import { z } from 'zod';
import { PluginManifestSchema } from './manifest.ts';

/** The JSON Schema of `plugin.toml` (as written, before defaults), for editors and external tooling. */
export function pluginManifestJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(PluginManifestSchema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return {
    ...schema,
    $id: 'https://trellis.dev/schema/plugin.schema.json',
    title: 'Trellis plugin.toml',
    description: 'The manifest of a Trellis plugin, schema_version 1.',
  };
}
