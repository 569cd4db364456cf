import { readFileSync } from 'node:fs';
import { parse } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { PluginManifestSchema } from '@trellis/sdk/schema';
import { OpenRouterSettingsSchema, plugin } from '../src/index.ts';

const manifest = () => PluginManifestSchema.parse(parse(readFileSync(new URL('../plugin.toml', import.meta.url), 'utf8')));

describe('openrouter', () => {
  it('has a valid manifest that the code implements, as a provider with no tools', () => {
    expect(plugin.manifest.id).toBe(manifest().id);
    expect(plugin.tools).toEqual([]);
    expect(typeof plugin.provider?.create).toBe('function');
  });

  it('needs OPENROUTER_API_KEY and is in the minimal profile', () => {
    const m = manifest();
    expect([m.kind, m.profile, m.requires_env]).toEqual(['provider', 'minimal', ['OPENROUTER_API_KEY']]);
  });

  it('has safe defaults and refuses unknown or bad settings', () => {
    expect(OpenRouterSettingsSchema.parse({})).toEqual({
      base_url: 'https://openrouter.ai/api/v1',
      model: 'openrouter/auto',
      headers: {},
      timeout_seconds: 120,
      max_retries: 2,
      app_url: 'https://github.com/trellis',
      app_name: 'Trellis',
    });
    expect(OpenRouterSettingsSchema.safeParse({ base_url: 'ftp://x' }).success).toBe(false);
    expect(OpenRouterSettingsSchema.safeParse({ modle: 'x' }).success).toBe(false);
    expect(OpenRouterSettingsSchema.safeParse({ max_retries: 11 }).success).toBe(false);
    expect(OpenRouterSettingsSchema.safeParse({ headers: { 'X-Token': 'secret\nX-Injected: 1' } }).success).toBe(false);
  });
});
