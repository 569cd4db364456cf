import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildPluginRegistrySnapshot, createManifestParseCache, type ManifestParseCache } from '../src/index.ts';
import { PROCESS_RUNTIME, PROFILES, config, fileRoot, makeTree, manifestText } from './helpers.ts';

function build(base: string, manifestCache?: ManifestParseCache) {
  return buildPluginRegistrySnapshot({
    config: config({ plugins: { allow: ['alpha', 'beta'] } }),
    roots: [fileRoot(join(base, 'plugins'))],
    bundled: [],
    profiles: PROFILES,
    env: {},
    uid: 0,
    commandsOnPath: {},
    ...(manifestCache !== undefined ? { manifestCache } : {}),
  });
}
const manifestOf = (result: ReturnType<typeof build>, id: string) => result.snapshot.plugins.find((p) => p.id === id)?.manifest;

describe('ManifestParseCache', () => {
  it('parses a manifest again only when its bytes changed, and forgets removed ones', () => {
    const base = makeTree({
      'plugins/alpha/plugin.toml': manifestText({ id: 'alpha', runtime: PROCESS_RUNTIME, description: 'first' }),
      'plugins/beta/plugin.toml': manifestText({ id: 'beta', runtime: PROCESS_RUNTIME }),
    });
    const cache = createManifestParseCache();
    const first = build(base, cache);
    const second = build(base, cache);
    // The same parse, not an equal one: nothing was parsed again.
    expect(manifestOf(second, 'alpha')).toBe(manifestOf(first, 'alpha'));
    expect(manifestOf(second, 'beta')).toBe(manifestOf(first, 'beta'));
    // Without the cache every build parses anew.
    expect(manifestOf(build(base), 'alpha')).not.toBe(manifestOf(first, 'alpha'));
    expect(manifestOf(build(base), 'alpha')).toEqual(manifestOf(first, 'alpha'));

    writeFileSync(join(base, 'plugins/alpha/plugin.toml'), manifestText({ id: 'alpha', runtime: PROCESS_RUNTIME, description: 'second' }));
    const third = build(base, cache);
    expect(manifestOf(third, 'alpha')?.description).toBe('second');
    expect(manifestOf(third, 'beta')).toBe(manifestOf(first, 'beta'));

    // Gone for one build, back with the same bytes: parsed again (the cache keeps what the last build read).
    rmSync(join(base, 'plugins/beta'), { recursive: true });
    expect(manifestOf(build(base, cache), 'beta')).toBeUndefined();
    mkdirSync(join(base, 'plugins/beta'));
    writeFileSync(join(base, 'plugins/beta/plugin.toml'), manifestText({ id: 'beta', runtime: PROCESS_RUNTIME }));
    const back = manifestOf(build(base, cache), 'beta');
    expect(back).not.toBe(manifestOf(first, 'beta'));
    expect(back).toEqual(manifestOf(first, 'beta'));
  });

  it('answers an invalid manifest the same from the cache: the same errors, still rejected', () => {
    const base = makeTree({ 'plugins/alpha/plugin.toml': 'id = "alpha"\nkind = ' });
    const cache = createManifestParseCache();
    const reasons = (result: ReturnType<typeof build>) => result.snapshot.plugins.find((p) => p.id === 'alpha')?.reasons;
    const first = build(base, cache);
    expect(first.snapshot.plugins.find((p) => p.id === 'alpha')?.state).toBe('rejected');
    expect(reasons(build(base, cache))).toEqual(reasons(first));
    expect(reasons(build(base))).toEqual(reasons(first));
  });
});
