export {
  RuntimeConfigSchema,
  PluginsConfigSchema,
  PluginEntrySchema,
  RuntimeSectionSchema,
  ToolPolicySchema,
} from './RuntimeConfigSchema.ts';
export type { RuntimeConfig, PluginsConfig, PluginEntry, RuntimeSection, ToolPolicy } from './RuntimeConfigSchema.ts';
export { ServeSectionSchema, bearerTokenProblem } from './RuntimeConfigSchema.ts';
export type { ServeSection } from './RuntimeConfigSchema.ts';
export { MAX_CONFIG_BYTES, MAX_CONFIG_DEPTH, FORBIDDEN_KEYS, MAX_REPORTED_PROBLEMS } from './ConfigProblem.ts';
export type { ConfigProblem, ConfigLoadResult } from './ConfigProblem.ts';
export { parseRuntimeConfig } from './parseRuntimeConfig.ts';
export type { ParseRuntimeConfigOptions } from './parseRuntimeConfig.ts';
export { loadRuntimeConfig } from './loadRuntimeConfig.ts';
export type { LoadRuntimeConfigOptions } from './loadRuntimeConfig.ts';
export { findRuntimeConfig } from './findRuntimeConfig.ts';
export type { ConfigSource, ConfigLocation, FindRuntimeConfigOptions } from './findRuntimeConfig.ts';
export { resolveRuntimeConfig, resolveRuntimeConfigInSteps, EMBEDDED_CONFIG_NAME } from './resolveRuntimeConfig.ts';
export type { ResolveRuntimeConfigOptions, ResolvedRuntimeConfig } from './resolveRuntimeConfig.ts';
export { expandEnvString } from './expandEnvString.ts';
export type { EnvExpansion } from './expandEnvString.ts';
export { runtimeConfigJsonSchema } from './runtimeConfigJsonSchema.ts';
export { runtimeConfigDefaults } from './runtimeConfigDefaults.ts';
export { findConfigLayers } from './findRuntimeConfig.ts';
export type { ConfigLayerLocation } from './findRuntimeConfig.ts';
export type { ConfigLayerReport, ConfigOrigin } from './resolveRuntimeConfig.ts';
export { quoteArg } from './resolveRuntimeConfig.ts';
export { parseConfigLayer } from './parseRuntimeConfig.ts';
export type { ConfigLayerParse, ParseConfigLayerOptions } from './parseRuntimeConfig.ts';
export { mergeConfigLayers, flattenConfig, joinKeyPath } from './mergeConfigLayers.ts';
export type { LayerTree, MergedLayers } from './mergeConfigLayers.ts';
export { admitConfigFile } from './admitConfigFile.ts';
export type { ConfigFileFacts, ConfigStatFacts } from './admitConfigFile.ts';
export { readConfigFile, currentUid } from './readConfigFile.ts';
export type { ReadConfigFileOptions, ReadConfigResult } from './readConfigFile.ts';
export { resolveConfigHome } from './configHome.ts';
export type { ConfigHomeOptions } from './configHome.ts';
export {
  TRUST_STORE_FILE,
  trustStorePath,
  realWorkspacePath,
  loadTrustStore,
  findTrust,
  resolveWorkspaceTrust,
  saveTrustStore,
} from './trustStore.ts';
export type { TrustStore, TrustedWorkspace, TrustStoreLoad, WorkspaceTrust } from './trustStore.ts';
