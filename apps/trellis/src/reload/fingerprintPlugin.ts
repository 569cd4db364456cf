import type { SnapshotEntry } from '@trellis/registry';
import { samePlainData } from '@trellis/sdk/internal';

// The last fingerprint made of each entry, with what it was made from. A live host's reload keeps
// the entries (and settings) of plugins that did not change, so their fingerprints are not
// serialized again: the same inputs, the same string.
const made = new WeakMap<SnapshotEntry, { readonly parts: FingerprintParts; readonly fingerprint: string }>();

/**
 * What a plugin's implementation is made from, as one string: two generations with the same
 * fingerprint for a plugin can share its running implementation.
 */
export function fingerprintPlugin(parts: FingerprintParts): string {
  const { entry } = parts;
  const before = made.get(entry);
  if (
    before !== undefined &&
    before.parts.settings === parts.settings &&
    before.parts.trusted === parts.trusted &&
    before.parts.refreshToolSources === parts.refreshToolSources &&
    samePlainData(before.parts.overrides ?? null, parts.overrides ?? null)
  )
    return before.fingerprint;
  const fingerprint = JSON.stringify([
    entry.bundled,
    entry.manifestSha256,
    entry.pluginDir,
    parts.settings,
    parts.overrides ?? null,
    parts.trusted,
    parts.refreshToolSources,
  ]);
  made.set(entry, { parts, fingerprint });
  return fingerprint;
}

/** What {@link fingerprintPlugin} makes a fingerprint of. */
export interface FingerprintParts {
  readonly entry: SnapshotEntry;
  readonly settings: unknown;
  readonly overrides: unknown;
  readonly trusted: boolean;
  readonly refreshToolSources: boolean;
}
