import { readFileSync } from 'node:fs';
import { parse } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { PluginManifestSchema } from '@trellis/sdk/schema';
import { plugin } from '../src/index.ts';

describe('openrouter', () => {
  it('has a valid manifest that the code implements', () => {
    const manifest = PluginManifestSchema.parse(parse(readFileSync(new URL('../plugin.toml', import.meta.url), 'utf8')));
    expect(plugin.manifest.id).toBe(manifest.id);
  });

  it('declares no tools yet, so the snapshot reports NO_TOOLS instead of pretending', () => {
    expect(plugin.tools).toEqual([]);
  });
});

describe('openrouter availability', () => {
  it('needs OPENROUTER_API_KEY and is in the minimal profile', () => {
    const manifest = PluginManifestSchema.parse(parse(readFileSync(new URL('../plugin.toml', import.meta.url), 'utf8')));
    expect([manifest.kind, manifest.profile, manifest.requires_env]).toEqual(['provider', 'minimal', ['OPENROUTER_API_KEY']]);
  });
});
