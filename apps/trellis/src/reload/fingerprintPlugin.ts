import type { SnapshotEntry } from '@trellis/registry';

/**
 * What a plugin's implementation is made from, as one string: two generations with the same
 * fingerprint for a plugin can share its running implementation.
 */
export function fingerprintPlugin(parts: {
  readonly entry: SnapshotEntry;
  readonly settings: unknown;
  readonly overrides: unknown;
  readonly trusted: boolean;
  readonly refreshToolSources: boolean;
}): string {
  const { entry } = parts;
  return JSON.stringify([
    entry.bundled,
    entry.manifestSha256,
    entry.pluginDir,
    parts.settings,
    parts.overrides ?? null,
    parts.trusted,
    parts.refreshToolSources,
  ]);
}
