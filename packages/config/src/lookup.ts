// `@trellis/config/lookup`: where runtime.toml is, without loading the parser or the schema.
export { findRuntimeConfig } from './findRuntimeConfig.ts';
export type { ConfigSource, ConfigLocation, FindRuntimeConfigOptions } from './findRuntimeConfig.ts';
