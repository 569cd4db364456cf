import type * as SmolToml from 'smol-toml';
import { afterEach, describe, expect, it, vi } from 'vitest';

const manifest = new TextEncoder().encode('schema_version = 1\nid = "hello"\nname = "Hello"\nversion = "1.0.0"\nkind = "toolset"\n');

/** parseManifest loaded fresh under the given switch, with smol-toml's parse counted. */
async function loadWithSwitch(value: string | undefined) {
  vi.resetModules();
  if (value === undefined) vi.unstubAllEnvs();
  else vi.stubEnv('TRELLIS_TOML_FAST_PATH', value);
  const calls: string[] = [];
  vi.doMock('smol-toml', async (importOriginal) => {
    const real = await importOriginal<typeof SmolToml>();
    return { ...real, parse: (...args: Parameters<typeof real.parse>) => (calls.push(args[0]), real.parse(...args)) };
  });
  const { parseManifest } = await import('../src/parseManifest.ts');
  return { parseManifest, calls };
}

afterEach(() => {
  vi.doUnmock('smol-toml');
  vi.unstubAllEnvs();
});

describe('TRELLIS_TOML_FAST_PATH', () => {
  it('parses the common subset by hand by default', async () => {
    const { parseManifest, calls } = await loadWithSwitch(undefined);
    expect(parseManifest(manifest).manifest?.id).toBe('hello');
    expect(calls).toHaveLength(0);
  });

  it('=0 sends every manifest to smol-toml, with the same result', async () => {
    const { parseManifest, calls } = await loadWithSwitch('0');
    expect(parseManifest(manifest).manifest?.id).toBe('hello');
    expect(calls).toHaveLength(1);
  });
});
