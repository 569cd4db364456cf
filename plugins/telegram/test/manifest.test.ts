import { readFileSync } from 'node:fs';
import { parse } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { PluginManifestSchema } from '@trellis/sdk/schema';
import { plugin, splitMessage } from '../src/index.ts';

const manifest = () => PluginManifestSchema.parse(parse(readFileSync(new URL('../plugin.toml', import.meta.url), 'utf8')));

describe('telegram', () => {
  it('has a valid manifest that the code implements, as a connector with no tools', () => {
    expect(plugin.manifest.id).toBe(manifest().id);
    expect(plugin.tools).toEqual([]);
    expect(typeof plugin.connector?.create).toBe('function');
  });

  it('needs TELEGRAM_BOT_TOKEN and is in the messaging profile', () => {
    const m = manifest();
    expect([m.kind, m.profile, m.requires_env]).toEqual(['connector', 'messaging', ['TELEGRAM_BOT_TOKEN']]);
  });
});

describe('splitMessage', () => {
  it('keeps short text whole and cuts long text under the limit at the best boundary', () => {
    expect(splitMessage('hello')).toEqual(['hello']);
    const paragraphs = `${'a'.repeat(3000)}\n\n${'b'.repeat(3000)}`;
    expect(splitMessage(paragraphs)).toEqual(['a'.repeat(3000), 'b'.repeat(3000)]);
    const words = Array.from({ length: 2000 }, (_, i) => `w${i}`).join(' ');
    const parts = splitMessage(words);
    expect(parts.every((p) => p.length <= 4096)).toBe(true);
    expect(parts.join(' ')).toBe(words);
    const solid = 'x'.repeat(10_000);
    expect(splitMessage(solid).map((p) => p.length)).toEqual([4096, 4096, 1808]);
  });

  it('never splits a surrogate pair', () => {
    const emoji = '😀'.repeat(3000); // 6000 code units, no spaces
    const parts = splitMessage(emoji);
    expect(parts.join('')).toBe(emoji);
    expect(parts.every((p) => p.length <= 4096 && !/^[\udc00-\udfff]/.test(p))).toBe(true);
  });
});
