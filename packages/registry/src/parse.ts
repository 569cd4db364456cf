// `@trellis/registry/parse`: plugin.toml and profiles.toml parsers (smol-toml and the zod schema).
// Off the main entry so a host with no external plugins loads neither; the pipeline loads the
// manifest parser on demand through prepareRegistry().
export { parseManifest, MAX_MANIFEST_DEPTH } from './parseManifest.ts';
export { parseProfiles } from './parseProfiles.ts';
