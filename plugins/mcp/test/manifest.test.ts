import { readFileSync } from 'node:fs';
import { parse } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { PluginManifestSchema } from '@trellis/sdk/schema';
import { plugin } from '../src/index.ts';

describe('mcp', () => {
  it('has a valid manifest that the code implements', () => {
    const manifest = PluginManifestSchema.parse(parse(readFileSync(new URL('../plugin.toml', import.meta.url), 'utf8')));
    expect(plugin.manifest.id).toBe(manifest.id);
  });

  it('has no static tools: they come from the configured servers through its tool source', () => {
    expect(plugin.tools).toEqual([]);
    expect(typeof plugin.toolSource).toBe('function');
    expect(plugin.settings?.schema.parse({})).toEqual({ servers: [] });
  });
});

describe('mcp profile', () => {
  it('refuses a server pinged more often than once a second', () => {
    const server = (interval: number) => ({ servers: [{ name: 's', command: 'node', health_check_interval_seconds: interval }] });
    const refused = plugin.settings?.schema.safeParse(server(0.0001));
    expect(refused?.success).toBe(false);
    expect(JSON.stringify(refused?.error?.issues)).toMatch(/must be 0 \(no health checks\) or at least 1 second/);
    expect(plugin.settings?.schema.safeParse(server(0)).success).toBe(true);
  });

  it('is a bridge in the full profile', () => {
    const manifest = PluginManifestSchema.parse(parse(readFileSync(new URL('../plugin.toml', import.meta.url), 'utf8')));
    expect([manifest.kind, manifest.profile, manifest.side_effects]).toEqual(['bridge', 'full', true]);
  });
});
