import { registryDependency } from './prepareRegistry.ts';
import type { ParsedManifest } from './parseManifest.ts';

/**
 * Parsed manifests kept from one snapshot build to the next, by their bytes. Parsing (TOML, then
 * the schema) is most of the registry's CPU per manifest and a pure function of the bytes, so a
 * host that rebuilds its snapshot (a live host's reload) parses only the manifests whose bytes
 * changed. Every file is still found, stat'ed, read and admitted anew: the cache trusts nothing
 * but equal bytes. Hold one per host, never per process (decision 0009).
 */
export interface ManifestParseCache {
  /** `parseManifest(bytes)`, answered from the last builds when the same bytes were parsed. */
  parse(bytes: Uint8Array): ParsedManifest;
  /** Ends a build: the next build finds what this one parsed, and nothing older (removed plugins are forgotten). */
  endBuild(): void;
}

/** Creates an empty {@link ManifestParseCache}; pass it as `manifestCache` to every build of one host. */
export function createManifestParseCache(): ManifestParseCache {
  // What this build parsed, and what the build before it parsed (the one this build looks up).
  let current = new Map<string, ParsedManifest>();
  let previous = new Map<string, ParsedManifest>();
  return {
    parse(bytes) {
      // A one-byte-per-char copy of the bytes: exact, and far cheaper than a UTF-8 decode and a parse.
      const key = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
      let parsed = current.get(key) ?? previous.get(key);
      if (parsed === undefined) parsed = registryDependency('parseManifest')(bytes);
      current.set(key, parsed);
      return parsed;
    },
    endBuild() {
      previous = current;
      current = new Map();
    },
  };
}
