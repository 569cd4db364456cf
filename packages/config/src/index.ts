export {
  RuntimeConfigSchema,
  PluginsConfigSchema,
  PluginEntrySchema,
  RuntimeSectionSchema,
  ToolPolicySchema,
} from './RuntimeConfigSchema.ts';
export type { RuntimeConfig, PluginsConfig, PluginEntry, RuntimeSection, ToolPolicy } from './RuntimeConfigSchema.ts';
export { ServeSectionSchema } from './RuntimeConfigSchema.ts';
export type { ServeSection } from './RuntimeConfigSchema.ts';
export { MAX_CONFIG_BYTES, MAX_CONFIG_DEPTH, FORBIDDEN_KEYS, MAX_REPORTED_PROBLEMS } from './ConfigProblem.ts';
export type { ConfigProblem, ConfigLoadResult } from './ConfigProblem.ts';
export { parseRuntimeConfig } from './parseRuntimeConfig.ts';
export type { ParseRuntimeConfigOptions } from './parseRuntimeConfig.ts';
export { loadRuntimeConfig } from './loadRuntimeConfig.ts';
export type { LoadRuntimeConfigOptions } from './loadRuntimeConfig.ts';
export { findRuntimeConfig } from './findRuntimeConfig.ts';
export type { ConfigSource, ConfigLocation, FindRuntimeConfigOptions } from './findRuntimeConfig.ts';
export { resolveRuntimeConfig, EMBEDDED_CONFIG_NAME } from './resolveRuntimeConfig.ts';
export type { ResolveRuntimeConfigOptions, ResolvedRuntimeConfig } from './resolveRuntimeConfig.ts';
export { expandEnvString } from './expandEnvString.ts';
export type { EnvExpansion } from './expandEnvString.ts';
export { runtimeConfigJsonSchema } from './runtimeConfigJsonSchema.ts';
export { runtimeConfigDefaults } from './runtimeConfigDefaults.ts';
