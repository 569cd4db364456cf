// `@trellis/config/lookup`: where runtime.toml is, without loading the parser or the schema.
export { findRuntimeConfig } from './findRuntimeConfig.ts';
export type { ConfigSource, ConfigLocation, FindRuntimeConfigOptions } from './findRuntimeConfig.ts';
export { findConfigLayers } from './findRuntimeConfig.ts';
export type { ConfigLayerLocation } from './findRuntimeConfig.ts';
export { resolveConfigHome } from './configHome.ts';
export { resolveWorkspaceTrust, loadTrustStore, saveTrustStore, trustStorePath, realWorkspacePath, findTrust } from './trustStore.ts';
export type { TrustStore, TrustedWorkspace, TrustStoreLoad, WorkspaceTrust } from './trustStore.ts';
