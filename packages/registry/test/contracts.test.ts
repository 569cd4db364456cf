import { describe, expect, it } from 'vitest';
import { BUNDLED_ROOT, buildPluginRegistrySnapshot } from '../src/index.ts';
import { PROFILES, config, descriptor } from './helpers.ts';

describe('decide: plugins that implement a contract instead of tools', () => {
  it('warns NO_TOOLS for a tool-less plugin, but not for a provider or connector whose code implements its contract', () => {
    const bundled = [
      { ...descriptor({ id: 'model', kind: 'provider', profile: 'minimal' }, { tools: 0 }), contracts: ['provider' as const] },
      { ...descriptor({ id: 'chat-app', kind: 'connector', profile: 'minimal' }, { tools: 0 }), contracts: ['connector' as const] },
      descriptor({ id: 'empty', profile: 'minimal' }, { tools: 0 }),
    ];
    const { snapshot } = buildPluginRegistrySnapshot({
      config: config(),
      roots: [BUNDLED_ROOT],
      bundled,
      profiles: PROFILES,
      env: {},
      uid: 0,
      commandsOnPath: {},
    });
    expect(snapshot.plugins.map((p) => [p.id, p.state, p.warnings.map((w) => w.code)])).toEqual([
      ['chat-app', 'enabled', []],
      ['empty', 'enabled', ['NO_TOOLS']],
      ['model', 'enabled', []],
    ]);
  });
});
