// `@trellis/catalog/overrides`: parses config/tools.toml (smol-toml); the app does it at build time.
export { parseToolOverrides } from './parseToolOverrides.ts';
