import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUNDLED_ROOT, admitCandidate, buildPluginRegistrySnapshot, decide, explainPlugin, resolveDiscoveryRoots } from '../src/index.ts';
import type { AdmissionPolicy, BuildPluginRegistrySnapshotOptions, RootSpec } from '../src/index.ts';
import { PROCESS_RUNTIME, ONE_TOOL, PROFILES, config, descriptor, fileRoot, makeTree, manifestText, normalize } from './helpers.ts';
import type { TreeNode } from './helpers.ts';

const BUNDLED = [
  descriptor({ id: 'builtin-tools', profile: 'minimal', required: true }),
  descriptor({ id: 'core-fs', profile: 'minimal' }),
  descriptor({ id: 'core-python', requires_commands: ['python3'] }),
  descriptor({ id: 'openrouter', profile: 'minimal', kind: 'provider', requires_env: ['OPENROUTER_API_KEY'] }, { tools: 0 }),
  descriptor({ id: 'telegram', profile: 'messaging', kind: 'connector' }),
  descriptor({ id: 'mcp', profile: 'full', kind: 'bridge' }),
];

type Row = [id: string, root: string, state: string, reasons: string[], warnings: string[]];

function run(
  options: Partial<BuildPluginRegistrySnapshotOptions> & {
    tree?: Record<string, TreeNode>;
    rootNames?: Array<[string, RootSpec['root']]>;
  } = {},
) {
  const base = makeTree(options.tree ?? {});
  const roots: RootSpec[] = [
    ...(options.rootNames ?? []).map(([dir, kind]) => fileRoot(join(base, dir), kind as 'explicit')),
    BUNDLED_ROOT,
  ];
  const result = buildPluginRegistrySnapshot({
    config: options.config ?? config(),
    roots,
    bundled: options.bundled ?? BUNDLED,
    profiles: options.profiles ?? PROFILES,
    env: options.env ?? {},
    uid: 0,
    commandsOnPath: options.commandsOnPath ?? { python3: '/usr/bin/python3' },
  });
  const rows: Row[] = result.snapshot.plugins.map((p) => [
    p.id,
    p.source.root,
    p.state,
    p.reasons.map((r) => r.code),
    p.warnings.map((w) => w.code),
  ]);
  return { base, result, rows };
}

describe('decide: policy order', () => {
  it('applies the profile: minimal by default, larger profiles through includes', () => {
    expect(run().rows).toEqual([
      ['builtin-tools', 'bundled', 'enabled', ['REQUIRED'], []],
      ['core-fs', 'bundled', 'enabled', ['IN_PROFILE'], []],
      ['core-python', 'bundled', 'disabled', ['NOT_IN_PROFILE'], []],
      ['mcp', 'bundled', 'disabled', ['NOT_IN_PROFILE'], []],
      ['openrouter', 'bundled', 'unavailable', ['MISSING_ENV', 'IN_PROFILE'], ['NO_TOOLS']],
      ['telegram', 'bundled', 'disabled', ['NOT_IN_PROFILE'], []],
    ]);
    const full = run({ config: config({ plugins: { profile: 'full' } }), env: { OPENROUTER_API_KEY: 'sk-secret' } });
    expect(full.rows.map((r) => [r[0], r[2]])).toEqual([
      ['builtin-tools', 'enabled'],
      ['core-fs', 'enabled'],
      ['core-python', 'disabled'],
      ['mcp', 'enabled'],
      ['openrouter', 'enabled'],
      ['telegram', 'enabled'],
    ]);
    expect(full.result.snapshot.plugins.find((p) => p.id === 'mcp')!.reasons).toEqual([
      { code: 'IN_PROFILE', message: 'enabled by profile "full"' },
    ]);
    expect(full.result.snapshot.plugins.find((p) => p.id === 'core-fs')!.reasons).toEqual([
      { code: 'IN_PROFILE', message: 'enabled by profile "full" (which includes "minimal")' },
    ]);
  });

  it('first match wins: required, entries false/true, deny, allow, profile', () => {
    const { rows, result } = run({
      config: config({
        plugins: {
          allow: ['core-python', 'telegram', 'core-fs'],
          deny: ['builtin-tools', 'core-fs', 'mcp'],
          entries: { 'builtin-tools': { enabled: false }, telegram: { enabled: false }, mcp: { enabled: true } },
        },
      }),
      env: { OPENROUTER_API_KEY: 'x' },
    });
    expect(rows).toEqual([
      ['builtin-tools', 'bundled', 'enabled', ['REQUIRED'], ['REQUIRED_OVERRIDE_IGNORED', 'REQUIRED_OVERRIDE_IGNORED']],
      ['core-fs', 'bundled', 'disabled', ['DENIED'], []],
      ['core-python', 'bundled', 'enabled', ['ALLOWED'], []],
      ['mcp', 'bundled', 'enabled', ['ENABLED_BY_ENTRY'], []],
      ['openrouter', 'bundled', 'enabled', ['IN_PROFILE'], ['NO_TOOLS']],
      ['telegram', 'bundled', 'disabled', ['DISABLED_BY_ENTRY'], []],
    ]);
    expect(result.snapshot.plugins[0]!.warnings).toEqual([
      {
        code: 'REQUIRED_OVERRIDE_IGNORED',
        message: '[plugins] deny names "builtin-tools", a required plugin; it stays enabled. Remove "builtin-tools" from deny',
      },
      {
        code: 'REQUIRED_OVERRIDE_IGNORED',
        message:
          '[plugins.entries.builtin-tools] enabled = false is ignored: "builtin-tools" is required and stays enabled. Remove the line',
      },
    ]);
  });

  it('availability: a missing variable or program makes the plugin unavailable and names it, never its value', () => {
    const { rows, result } = run({
      config: config({ plugins: { allow: ['core-python'] } }),
      commandsOnPath: { python3: null },
      env: { OPENROUTER_API_KEY: '' },
    });
    expect(rows.filter((r) => r[2] === 'unavailable')).toEqual([
      ['core-python', 'bundled', 'unavailable', ['MISSING_COMMAND', 'ALLOWED'], []],
      ['openrouter', 'bundled', 'unavailable', ['MISSING_ENV', 'IN_PROFILE'], ['NO_TOOLS']],
    ]);
    expect(result.snapshot.plugins.filter((p) => p.state === 'unavailable').map((p) => p.reasons[0]!.message)).toEqual([
      'program python3 is not on PATH; "core-python" needs it. Install python3 or add its folder to PATH',
      'environment variable OPENROUTER_API_KEY is not set; "openrouter" needs it. Set OPENROUTER_API_KEY to make it available',
    ]);
  });
});

describe('decide: identity across and within roots', () => {
  const tree = {
    'ws/hello/plugin.toml': manifestText({ id: 'hello', runtime: PROCESS_RUNTIME, profile: 'minimal' }),
    'user/hello/plugin.toml': manifestText({ id: 'hello', runtime: PROCESS_RUNTIME, profile: 'minimal' }),
    'ws/twin-a/plugin.toml': manifestText({ id: 'twin', runtime: PROCESS_RUNTIME }),
    'ws/twin-b/plugin.toml': manifestText({ id: 'twin', runtime: PROCESS_RUNTIME }),
    'user/twin/plugin.toml': manifestText({ id: 'twin', runtime: PROCESS_RUNTIME, profile: 'minimal' }),
    'user/web/plugin.toml': manifestText({ id: 'core-fs', runtime: PROCESS_RUNTIME, profile: 'minimal' }),
    'ws/bare/plugin.toml': manifestText({ id: 'bare', profile: 'minimal', tools: ONE_TOOL }),
  };
  const rootNames: Array<[string, RootSpec['root']]> = [
    ['ws', 'workspace'],
    ['user', 'user'],
  ];

  it('lower root number wins, the rest are shadowed naming the winner; two in one root are both rejected', () => {
    const { base, rows, result } = run({ tree, rootNames });
    expect(rows).toEqual([
      ['bare', 'workspace', 'disabled', ['NO_IMPLEMENTATION'], []],
      ['builtin-tools', 'bundled', 'enabled', ['REQUIRED'], []],
      ['core-fs', 'user', 'enabled', ['IN_PROFILE'], []],
      ['core-fs', 'bundled', 'shadowed', ['SHADOWED'], []],
      ['core-python', 'bundled', 'disabled', ['NOT_IN_PROFILE'], []],
      ['hello', 'workspace', 'enabled', ['IN_PROFILE'], []],
      ['hello', 'user', 'shadowed', ['SHADOWED'], []],
      ['mcp', 'bundled', 'disabled', ['NOT_IN_PROFILE'], []],
      ['openrouter', 'bundled', 'unavailable', ['MISSING_ENV', 'IN_PROFILE'], ['NO_TOOLS']],
      ['telegram', 'bundled', 'disabled', ['NOT_IN_PROFILE'], []],
      ['twin', 'workspace', 'rejected', ['AMBIGUOUS_ID'], []],
      ['twin', 'workspace', 'rejected', ['AMBIGUOUS_ID'], []],
      ['twin', 'user', 'enabled', ['IN_PROFILE'], []],
    ]);
    const messages = (id: string) =>
      normalize(
        result.snapshot.plugins.filter((p) => p.id === id).map((p) => p.reasons[0]!.message),
        base,
      );
    expect(messages('hello')).toEqual([
      'enabled by profile "minimal"',
      'shadowed by "hello" from the workspace root (<tmp>/ws/hello/plugin.toml), which has a lower root number (2 < 3); remove one of them or give this one another id',
    ]);
    expect(messages('twin').slice(0, 1)).toEqual([
      'id "twin" is declared by 2 manifests at the same priority (workspace root): this one and the workspace root (<tmp>/ws/twin-b/plugin.toml); rename or remove all but one',
    ]);
    expect(messages('bare')).toEqual([
      '<tmp>/ws/bare/plugin.toml has no [runtime] and no bundled plugin implements "bare"; add a [runtime] table (process, script or http) so Trellis can run it',
    ]);
  });
});

describe('decide: settings', () => {
  const fsSettings = {
    key: 'fs',
    jsonSchema: {
      type: 'object',
      additionalProperties: false,
      properties: {
        root: { type: 'string' },
        max_read_bytes: { type: 'integer', minimum: 1 },
        limits: { type: 'object', properties: { depth: { type: 'integer' } } },
      },
    },
    defaults: { root: '.', max_read_bytes: 1024, limits: { depth: 3 } },
  };
  const bundled = [
    descriptor({ id: 'core-fs', profile: 'minimal' }, { settings: fsSettings }),
    descriptor({ id: 'core-table', profile: 'minimal' }),
  ];
  const external = {
    'ws/ext/plugin.toml': manifestText({
      id: 'ext',
      profile: 'minimal',
      runtime: PROCESS_RUNTIME,
      config_schema: { type: 'object', required: ['token_env'], properties: { token_env: { type: 'string' } } },
    }),
  };

  it('merges [runtime.tools.<key>] then the entry config over the defaults and exposes them outside the snapshot', () => {
    const { result, rows } = run({
      bundled,
      tree: external,
      rootNames: [['ws', 'workspace']],
      config: config({
        runtime: { tools: { fs: { max_read_bytes: 2048, limits: { extra: true } } } },
        plugins: { entries: { 'core-fs': { config: { root: '/srv' } }, ext: { config: { token_env: 'EXT_TOKEN' } } } },
      }),
    });
    expect(rows.map((r) => [r[0], r[2]])).toEqual([
      ['core-fs', 'enabled'],
      ['core-table', 'enabled'],
      ['ext', 'enabled'],
    ]);
    expect(Object.fromEntries(result.settings)).toEqual({
      'core-fs': { root: '/srv', max_read_bytes: 2048, limits: { depth: 3, extra: true } },
      'core-table': {},
      ext: { token_env: 'EXT_TOKEN' },
    });
  });

  it('a bad value quarantines only that plugin (CONFIG_INVALID naming the key), never the others', () => {
    const { result, rows, base } = run({
      bundled,
      tree: external,
      rootNames: [['ws', 'workspace']],
      config: config({
        runtime: { tools: { fs: { max_read_bytes: 'lots', typo: 1 } } },
        plugins: { entries: { ext: { config: { token_env: 7 } } } },
      }),
    });
    expect(rows.map((r) => [r[0], r[2], r[3]])).toEqual([
      ['core-fs', 'disabled', ['CONFIG_INVALID', 'IN_PROFILE']],
      ['core-table', 'enabled', ['IN_PROFILE']],
      ['ext', 'disabled', ['CONFIG_INVALID', 'IN_PROFILE']],
    ]);
    expect(
      normalize(
        result.snapshot.plugins.map((p) => p.reasons[0]!.message),
        base,
      ),
    ).toEqual([
      'settings of "core-fs" are invalid, so it is disabled: runtime.tools.fs.typo: unknown key; runtime.tools.fs.max_read_bytes: must be integer; fix runtime.toml',
      'enabled by profile "minimal"',
      'settings of "ext" are invalid, so it is disabled: plugins.entries.ext.config.token_env: must be string; fix runtime.toml',
    ]);
    expect([...result.settings.keys()]).toEqual(['core-table']);
  });
});

describe('decide is pure', () => {
  it('works on admitted bundled candidates with no filesystem at all', () => {
    const policy: AdmissionPolicy = { uid: 0, allow: [], bundledIds: new Map() };
    const admitted = [descriptor({ id: 'a', profile: 'minimal' }), descriptor({ id: 'b' })].map((d) =>
      admitCandidate({ bundled: true, source: BUNDLED_ROOT, descriptor: d }, policy),
    );
    const decided = decide(admitted, { config: config(), profiles: PROFILES, env: {}, commandsOnPath: {} });
    expect(decided.map((d) => [d.admitted.id, d.state, d.trace])).toEqual([
      [
        'a',
        'enabled',
        [
          { step: 'identity', message: 'bundled plugin "a" (@trellis/plugin-a)' },
          { step: 'admission', message: 'skipped: bundled plugins are checked when the build links them' },
          { step: 'selection', message: 'the only admitted candidate with this id' },
          {
            step: 'policy',
            message:
              'not required; no [plugins.entries.a] enabled switch; not in deny; not in allow; its profile "minimal" is part of the active profile "minimal" → enabled',
          },
          { step: 'implementation', message: 'bundled implementation, loaded on first use' },
          { step: 'config', message: 'valid' },
          { step: 'availability', message: 'needs nothing from the environment' },
        ],
      ],
      [
        'b',
        'disabled',
        [
          { step: 'identity', message: 'bundled plugin "b" (@trellis/plugin-b)' },
          { step: 'admission', message: 'skipped: bundled plugins are checked when the build links them' },
          { step: 'selection', message: 'the only admitted candidate with this id' },
          {
            step: 'policy',
            message:
              'not required; no [plugins.entries.b] enabled switch; not in deny; not in allow; it belongs to no profile (opt-in only) → disabled',
          },
          { step: 'implementation', message: 'bundled implementation, loaded on first use' },
        ],
      ],
    ]);
  });
});

describe('decide: an untrusted workspace', () => {
  const tree = {
    'ws/.trellis/plugins/x/plugin.toml': manifestText({ id: 'x', runtime: PROCESS_RUNTIME }),
    'ws/.trellis/plugins/shared/plugin.toml': manifestText({ id: 'shared', runtime: PROCESS_RUNTIME, tools: ONE_TOOL }),
    'ws/.trellis/plugins/loud/plugin.toml': manifestText({ id: 'loud', side_effects: true, runtime: PROCESS_RUNTIME, tools: ONE_TOOL }),
    'user/shared/plugin.toml': manifestText({ id: 'shared', runtime: PROCESS_RUNTIME, tools: ONE_TOOL }),
  };

  function decideWith(trusted: boolean) {
    const base = makeTree(tree);
    const roots = resolveDiscoveryRoots({
      config: config({ plugins: { allow: ['x', 'loud'] } }),
      env: {},
      workspace: join(base, 'ws'),
      home: join(base, 'home'),
      workspaceTrusted: trusted,
    }).map((r) => (r.root === 'user' ? { ...r, path: join(base, 'user') } : r));
    const result = buildPluginRegistrySnapshot({
      config: config({ plugins: { allow: ['x', 'loud'] } }),
      roots,
      bundled: [],
      profiles: PROFILES,
      env: {},
      uid: 0,
      commandsOnPath: { python3: '/usr/bin/python3' },
    });
    return {
      base,
      result,
      rows: result.snapshot.plugins.map((p) => [p.id, p.source.root, p.state, p.reasons.map((r) => r.code).join(',')]),
    };
  }

  it('lists its plugins as disabled (WORKSPACE_UNTRUSTED), even allowed ones, and lets none shadow a trusted plugin', () => {
    const { base, result, rows } = decideWith(false);
    expect(rows).toEqual([
      ['loud', 'workspace', 'disabled', 'WORKSPACE_UNTRUSTED'],
      ['shared', 'workspace', 'disabled', 'WORKSPACE_UNTRUSTED'],
      ['shared', 'user', 'disabled', 'NOT_IN_PROFILE'],
      ['x', 'workspace', 'disabled', 'WORKSPACE_UNTRUSTED'],
    ]);
    const x = result.snapshot.plugins.find((p) => p.id === 'x')!;
    expect(x.reasons[0]!.message).toBe(
      `"x" comes from the plugin folder of the workspace ${join(base, 'ws')} (${join(base, 'ws', '.trellis', 'plugins', 'x', 'plugin.toml')}), which you have not trusted, so it is not started and takes no part in the decision. If you trust this folder, run \`trellis trust ${join(base, 'ws')}\``,
    );
    const explained = explainPlugin(result, 'x');
    expect(explained.candidates[0]!.trace.map((s) => s.step)).toEqual(['identity', 'admission', 'trust']);
  });

  it('decides them as usual once trusted', () => {
    const { rows } = decideWith(true);
    expect(rows).toEqual([
      ['loud', 'workspace', 'enabled', 'ALLOWED'],
      ['shared', 'workspace', 'disabled', 'NOT_IN_PROFILE'],
      ['shared', 'user', 'shadowed', 'SHADOWED'],
      ['x', 'workspace', 'enabled', 'ALLOWED'],
    ]);
  });
});
