import { createHash } from 'node:crypto';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  BUNDLED_ROOT,
  buildPluginRegistrySnapshot,
  explainPlugin,
  formatExplanation,
  serializeSnapshot,
  stableStringify,
} from '../src/index.ts';
import { PROCESS_RUNTIME, ONE_TOOL, PROFILES, config, descriptor, fileRoot, makeTree, manifestText, normalize } from './helpers.ts';

const BUNDLED = [
  descriptor({ id: 'builtin-tools', profile: 'minimal', required: true }),
  descriptor({ id: 'core-fs', profile: 'minimal' }, { tools: 0 }),
];

function tree() {
  return makeTree({
    'explicit/hello/plugin.toml': manifestText({ id: 'hello', runtime: PROCESS_RUNTIME, profile: 'minimal' }),
    'ws/hello/plugin.toml': manifestText({ id: 'hello', runtime: PROCESS_RUNTIME }),
    'ws/broken/plugin.toml': 'id = "broken"\nkind = ',
    'ws/.hidden/plugin.toml': manifestText({ id: 'hidden', runtime: PROCESS_RUNTIME, tools: ONE_TOOL }),
    'user/linked': { symlink: '../ws/.hidden' },
    'user/ww/plugin.toml': { text: manifestText({ id: 'ww', runtime: PROCESS_RUNTIME }), mode: 0o646 },
  });
}

function build(base: string) {
  return buildPluginRegistrySnapshot({
    config: config({ plugins: { deny: ['nobody-has-this'] } }),
    roots: [
      fileRoot(join(base, 'explicit'), 'explicit'),
      fileRoot(join(base, 'missing'), 'env'),
      fileRoot(join(base, 'ws'), 'workspace'),
      fileRoot(join(base, 'user'), 'user'),
      BUNDLED_ROOT,
    ],
    bundled: BUNDLED,
    profiles: PROFILES,
    env: {},
    uid: 0,
    commandsOnPath: {},
  });
}

describe('buildPluginRegistrySnapshot', () => {
  it('keeps every candidate in a deterministic order with host warnings', () => {
    const base = tree();
    const { snapshot } = build(base);
    expect(
      normalize(
        snapshot.plugins.map((p) => [
          p.id,
          p.kind,
          p.source.root,
          p.source.priority,
          p.state,
          p.reasons.map((r) => r.code),
          p.warnings.map((w) => w.code),
          p.pluginDir,
        ]),
        base,
      ),
    ).toEqual([
      ['broken', 'unknown', 'workspace', 2, 'rejected', ['MANIFEST_INVALID'], [], '<tmp>/ws/broken'],
      ['builtin-tools', 'toolset', 'bundled', 4, 'enabled', ['REQUIRED'], [], null],
      ['core-fs', 'toolset', 'bundled', 4, 'enabled', ['IN_PROFILE'], ['NO_TOOLS'], null],
      ['hello', 'toolset', 'explicit', 0, 'enabled', ['IN_PROFILE'], [], '<tmp>/explicit/hello'],
      ['hello', 'toolset', 'workspace', 2, 'shadowed', ['SHADOWED'], [], '<tmp>/ws/hello'],
      ['hidden', 'toolset', 'workspace', 2, 'disabled', ['NOT_IN_PROFILE'], [], '<tmp>/ws/.hidden'],
      // user/linked points into another root: outside its own root, so rejected.
      ['hidden', 'toolset', 'user', 3, 'rejected', ['PATH_ESCAPE'], ['SYMLINK'], '<tmp>/ws/.hidden'],
      ['ww', 'toolset', 'user', 3, 'rejected', ['WORLD_WRITABLE'], [], '<tmp>/user/ww'],
    ]);
    expect(normalize(snapshot.warnings, base)).toEqual([
      {
        code: 'ROOT_MISSING',
        message: 'plugin root <tmp>/missing (test env root) does not exist; create it or remove it from the env roots',
      },
      {
        code: 'UNKNOWN_KEY',
        message:
          '[plugins] deny names "nobody-has-this", but no plugin has that id; check the spelling (`trellis plugins list` shows every id)',
      },
    ]);
    expect(snapshot.profile).toBe('minimal');
    expect(snapshot.hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('is frozen all the way down', () => {
    const { snapshot } = build(tree());
    expect([
      Object.isFrozen(snapshot),
      Object.isFrozen(snapshot.plugins),
      Object.isFrozen(snapshot.plugins[3]!.manifest),
      Object.isFrozen(snapshot.plugins[3]!.reasons[0]),
    ]).toEqual([true, true, true, true]);
    expect(() => (snapshot.plugins as unknown as unknown[]).push(1)).toThrow(TypeError);
  });

  it('gives byte-identical JSON and hash for identical inputs, and a different hash when anything changes', () => {
    const base = tree();
    const first = serializeSnapshot(build(base).snapshot);
    const second = serializeSnapshot(build(base).snapshot);
    expect(second).toBe(first);
    const parsed = JSON.parse(first) as Record<string, unknown>;
    expect(Object.keys(parsed)).toEqual(['hash', 'plugins', 'profile', 'warnings']);
    // The fast writer gives exactly the generic sorted-key JSON of the entries without `manifest`.
    const { snapshot } = build(base);
    const withoutManifest = snapshot.plugins.map(({ manifest: _m, ...rest }) => rest);
    expect(first).toBe(
      stableStringify({ hash: snapshot.hash, plugins: withoutManifest, profile: snapshot.profile, warnings: snapshot.warnings }),
    );
    expect(snapshot.hash).toBe(
      createHash('sha256')
        .update(stableStringify({ plugins: withoutManifest, profile: snapshot.profile, warnings: snapshot.warnings }))
        .digest('hex'),
    );
    expect(snapshot.plugins.find((p) => p.id === 'broken')!.manifestSha256).toBe(
      createHash('sha256').update('id = "broken"\nkind = ').digest('hex'),
    );
    const hash = build(base).snapshot.hash;
    writeFileSync(
      join(base, 'explicit/hello/plugin.toml'),
      manifestText({ id: 'hello', runtime: PROCESS_RUNTIME, profile: 'minimal', description: 'changed' }),
    );
    expect(build(base).snapshot.hash).not.toBe(hash);
    chmodSync(join(base, 'user/ww/plugin.toml'), 0o644);
    const fixed = build(base).snapshot.plugins.find((p) => p.id === 'ww')!;
    expect([fixed.state, fixed.reasons.map((r) => r.code)]).toEqual(['disabled', ['NOT_IN_PROFILE']]);
  });

  it('explains every candidate of an id with checks and decision steps', () => {
    const base = tree();
    const result = build(base);
    const explanation = explainPlugin(result, 'hello');
    expect(explanation.candidates.map((c) => [c.source.root, c.state, c.checks.length, c.trace.map((s) => s.step)])).toEqual([
      ['explicit', 'enabled', 10, ['identity', 'admission', 'selection', 'policy', 'implementation', 'config', 'availability']],
      ['workspace', 'shadowed', 10, ['identity', 'admission', 'selection']],
    ]);
    expect(normalize(formatExplanation(explanation), base)).toMatchInlineSnapshot(`
      "hello: 2 candidates

      [1] ENABLED — explicit root (priority 0): <tmp>/explicit/hello/plugin.toml
          reason  IN_PROFILE: enabled by profile "minimal"
          admission checks:
            ok   inside its discovery root (PATH_ESCAPE): manifest and plugin folder resolve inside the root
            ok   a regular, single-linked file of at most 256 KiB (UNSAFE_FILE): a regular file with one link, within the size limit
            ok   not writable by every user (WORLD_WRITABLE): neither the manifest nor any folder up to the root is world-writable
            ok   owned by you or root (UNSAFE_OWNER): the manifest and every folder up to the root belong to you or root
            ok   no symlink on the way (SYMLINK): no symlink between the root and the manifest
            ok   valid plugin.toml (MANIFEST_INVALID): valid TOML that matches the plugin.toml schema
            ok   id not reserved by a required bundled plugin (RESERVED_ID): not the id of a required bundled plugin
            skip a bundled id only with its own [runtime] (BUNDLED_ID_WITHOUT_RUNTIME): not the id of a bundled plugin
            ok   side effects allowed (SIDE_EFFECTS_NOT_ALLOWED): declares no side effects
            ok   [runtime] paths stay in the plugin folder (PATH_ESCAPE): relative command and args resolve inside the plugin folder
          decision:
            1. identity: "hello" from <tmp>/explicit/hello/plugin.toml
            2. admission: admitted (9 check(s) passed)
            3. selection: wins over the workspace root (<tmp>/ws/hello/plugin.toml) (lowest root number)
            4. policy: not required; no [plugins.entries.hello] enabled switch; not in deny; not in allow; its profile "minimal" is part of the active profile "minimal" → enabled
            5. implementation: out of process (process)
            6. config: valid
            7. availability: needs nothing from the environment
          from the host environment:
            always, when set: PATH, HOME, LANG, LC_ALL, TZ, TMPDIR
            nothing else: the manifest declares no variables (requires_env, env_from_host)

      [2] SHADOWED — workspace root (priority 2): <tmp>/ws/hello/plugin.toml
          reason  SHADOWED: shadowed by "hello" from the explicit root (<tmp>/explicit/hello/plugin.toml), which has a lower root number (0 < 2); remove one of them or give this one another id
          admission checks:
            ok   inside its discovery root (PATH_ESCAPE): manifest and plugin folder resolve inside the root
            ok   a regular, single-linked file of at most 256 KiB (UNSAFE_FILE): a regular file with one link, within the size limit
            ok   not writable by every user (WORLD_WRITABLE): neither the manifest nor any folder up to the root is world-writable
            ok   owned by you or root (UNSAFE_OWNER): the manifest and every folder up to the root belong to you or root
            ok   no symlink on the way (SYMLINK): no symlink between the root and the manifest
            ok   valid plugin.toml (MANIFEST_INVALID): valid TOML that matches the plugin.toml schema
            ok   id not reserved by a required bundled plugin (RESERVED_ID): not the id of a required bundled plugin
            skip a bundled id only with its own [runtime] (BUNDLED_ID_WITHOUT_RUNTIME): not the id of a bundled plugin
            ok   side effects allowed (SIDE_EFFECTS_NOT_ALLOWED): declares no side effects
            ok   [runtime] paths stay in the plugin folder (PATH_ESCAPE): relative command and args resolve inside the plugin folder
          decision:
            1. identity: "hello" from <tmp>/ws/hello/plugin.toml
            2. admission: admitted (9 check(s) passed)
            3. selection: shadowed by "hello" from the explicit root (<tmp>/explicit/hello/plugin.toml), which has a lower root number (0 < 2); remove one of them or give this one another id
          from the host environment:
            always, when set: PATH, HOME, LANG, LC_ALL, TZ, TMPDIR
            nothing else: the manifest declares no variables (requires_env, env_from_host)
      "
    `);
    expect(formatExplanation(explainPlugin(result, 'helo'))).toBe('No plugin candidate has the id "helo".\nDid you mean: hello?\n');
  });

  it('lists exactly what each plugin receives from the host environment', () => {
    const base = makeTree({
      'explicit/envy/plugin.toml': manifestText({
        id: 'envy',
        profile: 'minimal',
        requires_env: ['NOTES_TOKEN'],
        env_from_host: ['GITHUB_TOKEN', 'LOG_LEVEL'],
        runtime: { ...PROCESS_RUNTIME, env: { AUTH: 'token ${GITHUB_TOKEN}', SNEAKY: '${OPENROUTER_API_KEY}' } },
      }),
    });
    const cfg = config({ plugins: { entries: { envy: { pass_env: ['NOTES_TOKEN', 'GITHUB_TOKEN', 'OPENROUTER_API_KEY'] } } } });
    const result = buildPluginRegistrySnapshot({
      config: cfg,
      roots: [fileRoot(join(base, 'explicit'), 'explicit'), BUNDLED_ROOT],
      bundled: BUNDLED,
      profiles: PROFILES,
      env: { NOTES_TOKEN: 'x' },
      uid: 0,
      commandsOnPath: {},
    });
    const explanation = explainPlugin(result, 'envy', cfg);
    expect(explanation.candidates[0]?.hostEnv).toEqual({
      kind: 'granted',
      always: ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR'],
      declared: [
        { name: 'NOTES_TOKEN', declaredIn: 'requires_env', granted: true },
        { name: 'GITHUB_TOKEN', declaredIn: 'env_from_host', granted: true },
        { name: 'LOG_LEVEL', declaredIn: 'env_from_host', granted: false },
      ],
      granted: ['NOTES_TOKEN', 'GITHUB_TOKEN'],
      ignored: ['OPENROUTER_API_KEY'],
      problems: [
        'plugin envy: runtime.env.SNEAKY uses ${OPENROUTER_API_KEY}, which the manifest does not declare; a plugin may only expand variables listed in its env_from_host or requires_env',
      ],
    });
    const text = formatExplanation(explanation);
    expect(text.slice(text.indexOf('    from the host environment:'))).toBe(
      [
        '    from the host environment:',
        '      always, when set: PATH, HOME, LANG, LC_ALL, TZ, TMPDIR',
        '      NOTES_TOKEN (requires_env): granted by [plugins.entries.envy] pass_env',
        '      GITHUB_TOKEN (env_from_host): granted by [plugins.entries.envy] pass_env',
        '      LOG_LEVEL (env_from_host): not granted; add it to [plugins.entries.envy] pass_env to pass it',
        '      not passed: OPENROUTER_API_KEY (in pass_env, but the manifest does not declare it)',
        '      problem ENV_NOT_GRANTED: plugin envy: runtime.env.SNEAKY uses ${OPENROUTER_API_KEY}, which the manifest does not declare; a plugin may only expand variables listed in its env_from_host or requires_env',
        '',
      ].join('\n'),
    );
    expect(explainPlugin(result, 'core-fs', cfg).candidates[0]?.hostEnv).toEqual({ kind: 'in-process', requires: [] });
  });
});

describe('buildPluginRegistrySnapshotInSteps', () => {
  it('builds the same registry as the one-piece build, asking to pause after every unit of work', async () => {
    const { buildPluginRegistrySnapshotInSteps } = await import('../src/buildPluginRegistrySnapshot.ts');
    const files: Record<string, string> = {};
    const count = 25;
    for (let i = 0; i < count; i += 1) files[`root/p${i}/plugin.toml`] = manifestText({ id: `p${i}`, runtime: PROCESS_RUNTIME });
    files['root/broken/plugin.toml'] = 'id = "broken"\nkind = ';
    const base = makeTree(files);
    const options = {
      config: config({ plugins: { allow: ['p1', 'p7', 'nobody-has-this'] } }),
      roots: [fileRoot(join(base, 'root'), 'explicit'), BUNDLED_ROOT],
      bundled: BUNDLED,
      profiles: PROFILES,
      env: {},
      uid: 0,
      commandsOnPath: {},
    };
    const whole = buildPluginRegistrySnapshot(options);
    let asked = 0;
    let awaited = 0;
    const stepped = await buildPluginRegistrySnapshotInSteps(options, () => {
      asked += 1;
      // Every third point pauses: the pipeline must go on whether or not a pause is awaited.
      if (asked % 3 !== 0) return undefined;
      return Promise.resolve().then(() => void (awaited += 1));
    });
    expect(serializeSnapshot(stepped.snapshot)).toBe(serializeSnapshot(whole.snapshot));
    expect(stepped.snapshot.hash).toBe(whole.snapshot.hash);
    expect(stepped.snapshot.plugins).toHaveLength(count + 1 + BUNDLED.length);
    expect([...stepped.settings.keys()]).toEqual([...whole.settings.keys()]);
    expect(stepped.trace.map((d) => [d.admitted.id, d.state])).toEqual(whole.trace.map((d) => [d.admitted.id, d.state]));
    // A point after every folder walked, manifest located, candidate collected, admitted, decided
    // and entry frozen: more than four per manifest.
    expect(asked).toBeGreaterThan(4 * (count + 1));
    expect(awaited).toBe(Math.floor(asked / 3));
  });
});
