import type { SnapshotEntry } from '@trellis/registry';
import { describe, expect, it, vi } from 'vitest';
import { fingerprintPlugin } from '../../src/reload/fingerprintPlugin.ts';

function entry(sha: string): SnapshotEntry {
  const value: SnapshotEntry = {
    id: 'alpha',
    kind: 'toolset',
    state: 'enabled',
    source: { root: 'explicit', priority: 0, manifestPath: '/p/alpha/plugin.toml' },
    reasons: [],
    warnings: [],
    manifest: null,
    manifestSha256: sha,
    bundled: false,
    pluginDir: '/p/alpha',
  };
  return Object.freeze(value);
}

describe('fingerprintPlugin', () => {
  it('answers a kept entry from its last fingerprint only when every other part is the same', () => {
    const kept = entry('a1');
    const settings = Object.freeze({ level: 1 });
    const parts = { entry: kept, settings, overrides: { config: { level: 1 } }, trusted: false, refreshToolSources: false };
    const first = fingerprintPlugin(parts);
    // Not serialized again.
    const stringify = vi.spyOn(JSON, 'stringify');
    try {
      expect(fingerprintPlugin({ ...parts, overrides: { config: { level: 1 } } })).toBe(first);
      expect(stringify).not.toHaveBeenCalled();
    } finally {
      stringify.mockRestore();
    }
    // Any other part: a fingerprint of its own, equal to what a fresh entry gives.
    const variants = [
      { ...parts, settings: Object.freeze({ level: 2 }) },
      { ...parts, overrides: { config: { level: 2 } } },
      { ...parts, trusted: true },
      { ...parts, refreshToolSources: true },
    ];
    for (const variant of variants) {
      const fingerprint = fingerprintPlugin(variant);
      expect(fingerprint).not.toBe(first);
      expect(fingerprint).toBe(fingerprintPlugin({ ...variant, entry: entry('a1') }));
    }
    expect(fingerprintPlugin({ ...parts, entry: entry('b2') })).not.toBe(fingerprintPlugin(parts));
  });
});
