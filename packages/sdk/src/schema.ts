// `@trellis/sdk/schema`: the zod schemas behind plugin.toml and the zod → JSON Schema conversion.
// Kept off the main entry so a host that never parses a manifest never loads zod.
export {
  PluginIdSchema,
  PluginManifestSchema,
  PluginRuntimeSchema,
  ProcessRuntimeSchema,
  ScriptRuntimeSchema,
  HttpRuntimeSchema,
  ManifestToolSchema,
  HealthCheckIntervalSchema,
} from './manifest.ts';
export { pluginManifestJsonSchema } from './pluginManifestJsonSchema.ts';
export { toolJsonSchema } from './toolJsonSchema.ts';
