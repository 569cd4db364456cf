import { chmodSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { deepMerge, expandProfile, findCommandsOnPath, resolveDiscoveryRoots } from '../src/index.ts';
import { parseProfiles } from '../src/parse.ts';
import { config, makeTree } from './helpers.ts';

describe('resolveDiscoveryRoots', () => {
  it('orders explicit, env, workspace, user and bundled roots, resolving relative paths and dropping repeats', () => {
    const roots = resolveDiscoveryRoots({
      config: config({ plugins: { paths: ['./vendor', '~/shared'] } }),
      pluginPaths: ['cli-plugins', '/abs/vendor'],
      env: { TRELLIS_PLUGIN_PATH: '/env/a::/abs/vendor:rel', XDG_CONFIG_HOME: '/xdg' },
      workspace: 'ws',
      home: '/home/me',
      baseDir: '/etc/trellis',
      cwd: '/cwd',
    });
    expect(roots.map((r) => [r.root, r.priority, r.path, r.warnIfMissing])).toEqual([
      ['explicit', 0, '/etc/trellis/vendor', true],
      ['explicit', 0, '/home/me/shared', true],
      ['explicit', 0, '/cwd/cli-plugins', true],
      ['explicit', 0, '/abs/vendor', true],
      ['env', 1, '/env/a', true],
      ['env', 1, '/cwd/rel', true],
      ['workspace', 2, '/cwd/ws/.trellis/plugins', false],
      ['user', 3, '/xdg/trellis/plugins', false],
      ['bundled', 4, null, false],
    ]);
  });

  it('falls back to ~/.config when XDG_CONFIG_HOME is unset or relative', () => {
    const user = (env: Record<string, string>) =>
      resolveDiscoveryRoots({ config: config(), env, workspace: '/w', home: '/home/me', cwd: '/' }).find((r) => r.root === 'user')!.path;
    expect([user({}), user({ XDG_CONFIG_HOME: 'relative' })]).toEqual([
      '/home/me/.config/trellis/plugins',
      '/home/me/.config/trellis/plugins',
    ]);
  });
});

describe('parseProfiles', () => {
  it('reads profiles with include chains', () => {
    const result = parseProfiles('[minimal]\ndescription = "m"\n[messaging]\nincludes = ["minimal"]\n[full]\nincludes = ["messaging"]\n');
    expect(result).toEqual({
      value: {
        minimal: { description: 'm', includes: [] },
        messaging: { description: '', includes: ['minimal'] },
        full: { description: '', includes: ['messaging'] },
      },
      warnings: [],
      errors: [],
    });
    expect(expandProfile(result.value, 'full')).toEqual(['full', 'messaging', 'minimal']);
  });

  it('reports unknown includes, cycles, bad types and syntax errors', () => {
    expect(parseProfiles('[a]\nincludes = ["b"]\n[b]\nincludes = ["a"]\n[c]\nincludes = ["zzz"]\ncolor = 1\n[d]\nincludes = 3\n')).toEqual({
      value: {
        a: { description: '', includes: ['b'] },
        b: { description: '', includes: ['a'] },
        c: { description: '', includes: ['zzz'] },
      },
      warnings: [{ code: 'UNKNOWN_KEY', message: 'profiles.toml c.color: unknown key; a profile has description and includes' }],
      errors: [
        { code: 'CONFIG_SCHEMA', message: 'profiles.toml d.includes: must be a list of profile names' },
        { code: 'CONFIG_SCHEMA', message: 'profiles.toml a.includes: the includes chain comes back to "a"; remove the cycle' },
        { code: 'CONFIG_SCHEMA', message: 'profiles.toml b.includes: the includes chain comes back to "b"; remove the cycle' },
        { code: 'CONFIG_SCHEMA', message: 'profiles.toml c.includes: unknown profile "zzz"' },
      ],
    });
    expect(expandProfile({ a: { description: '', includes: ['b'] }, b: { description: '', includes: ['a'] } }, 'a')).toEqual(['a', 'b']);
    expect(parseProfiles('[a\n').errors.map((e) => e.code)).toEqual(['TOML_SYNTAX']);
  });
});

describe('deepMerge', () => {
  it('merges plain objects, replaces arrays and scalars, leaves inputs alone', () => {
    const base = { a: 1, nested: { x: 1, y: [1, 2] }, keep: 'k' };
    const patch = { a: 2, nested: { y: [3] }, extra: { z: true } };
    expect(deepMerge(base, patch)).toEqual({ a: 2, nested: { x: 1, y: [3] }, keep: 'k', extra: { z: true } });
    expect(base).toEqual({ a: 1, nested: { x: 1, y: [1, 2] }, keep: 'k' });
  });

  it('never reaches a prototype', () => {
    const patch = JSON.parse(
      '{"__proto__": {"polluted": true}, "constructor": {"prototype": {"polluted": true}}, "ok": {"__proto__": {"polluted": true}}}',
    ) as Record<string, unknown>;
    const merged = deepMerge({}, patch);
    expect(merged).toEqual({ ok: {} });
    expect([({} as Record<string, unknown>).polluted, Object.getPrototypeOf(merged.ok) === Object.prototype]).toEqual([undefined, true]);
  });
});

describe('findCommandsOnPath', () => {
  it('finds executable regular files on PATH, in PATH order, and nothing else', () => {
    const base = makeTree({ 'a/tool': '#!/bin/sh\n', 'b/tool': '#!/bin/sh\n', 'b/plain': 'not executable', 'b/dir/.keep': '' });
    chmodSync(join(base, 'b/tool'), 0o755);
    chmodSync(join(base, 'a/tool'), 0o644);
    const env = { PATH: [join(base, 'a'), 'relative', join(base, 'b')].join(':') };
    const found = findCommandsOnPath(['tool', 'plain', 'dir', 'missing', 'a/tool'], env);
    // Running as root, X_OK is true for any file with an x bit; `plain` has none.
    expect(found).toEqual({ 'a/tool': null, dir: null, missing: null, plain: null, tool: join(base, 'b/tool') });
  });
});
