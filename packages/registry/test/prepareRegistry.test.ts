import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { RuntimeConfigSchema } from '@trellis/config';

describe('prepareRegistry', () => {
  it('loads only what the inputs need', async () => {
    vi.resetModules();
    const fresh = await import('../src/prepareRegistry.ts');
    const config = RuntimeConfigSchema.parse({});
    const missing = join(tmpdir(), 'trellis-no-such-root');
    await fresh.prepareRegistry({ roots: [{ root: 'workspace', priority: 2, path: missing, origin: 'x', warnIfMissing: false }], config });
    expect(() => fresh.registryDependency('parseManifest')).toThrow(
      '@trellis/registry: parseManifest is not loaded; await prepareRegistry({ roots, config }) before building a snapshot',
    );
    expect(() => fresh.registryDependency('Ajv')).toThrow(/Ajv is not loaded/);

    const dir = mkdtempSync(join(tmpdir(), 'trellis-prepare-'));
    try {
      const patched = RuntimeConfigSchema.parse({ runtime: { tools: { fs: { allow_write: true } } } });
      await fresh.prepareRegistry({
        roots: [{ root: 'explicit', priority: 0, path: dir, origin: 'x', warnIfMissing: true }],
        config: patched,
      });
      expect(typeof fresh.registryDependency('parseManifest')).toBe('function');
      expect(typeof fresh.registryDependency('Ajv')).toBe('function');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('loads the validator with the manifest parser, so a config_schema never meets an unloaded ajv', async () => {
    vi.resetModules();
    const fresh = await import('../src/prepareRegistry.ts');
    const dir = mkdtempSync(join(tmpdir(), 'trellis-prepare-'));
    try {
      // A file root and a config that patches nothing: a manifest found there may still have a config_schema.
      await fresh.prepareRegistry({
        roots: [{ root: 'explicit', priority: 0, path: dir, origin: 'x', warnIfMissing: true }],
        config: RuntimeConfigSchema.parse({}),
      });
      expect(typeof fresh.registryDependency('parseManifest')).toBe('function');
      expect(typeof fresh.registryDependency('Ajv')).toBe('function');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('sees settings patches in [runtime.tools] and in entry configs', async () => {
    const { hasSettingsPatches } = await import('../src/prepareRegistry.ts');
    expect(hasSettingsPatches(RuntimeConfigSchema.parse({}))).toBe(false);
    expect(hasSettingsPatches(RuntimeConfigSchema.parse({ plugins: { entries: { x: { enabled: true } } } }))).toBe(false);
    expect(hasSettingsPatches(RuntimeConfigSchema.parse({ plugins: { entries: { x: { config: {} } } } }))).toBe(true);
  });
});
