import { describe, expect, it } from 'vitest';
import type { PluginImplementation } from './PluginImplementation.ts';
import { shareImplementation } from './shareImplementation.ts';

function fakeImplementation(): PluginImplementation & { disposals: number } {
  const implementation = {
    pluginId: 'p',
    disposals: 0,
    start: async () => {},
    call: async () => ({ ok: true as const, value: 'served' }),
    state: () => 'active' as const,
    discoveredTools: () => [],
    async dispose() {
      implementation.disposals += 1;
    },
  };
  return implementation;
}

describe('shareImplementation', () => {
  it('disposes the implementation only when the last view is disposed', async () => {
    const implementation = fakeImplementation();
    const shared = shareImplementation(implementation);
    const first = shared.acquire();
    const second = shared.acquire();
    expect(shared.holders()).toBe(2);
    await first.dispose();
    await first.dispose(); // a view's dispose is idempotent: it never releases another owner's hold
    expect(implementation.disposals).toBe(0);
    expect(await second.call({ tool: 't', input: {}, callId: 'c', signal: new AbortController().signal, deadlineAt: 0 })).toEqual({
      ok: true,
      value: 'served',
    });
    await second.dispose();
    expect(implementation.disposals).toBe(1);
    expect(shared.disposed()).toBe(true);
    expect(() => shared.acquire()).toThrow(/already disposed/);
  });

  it('forwards the optional methods the implementation has, and only those', () => {
    const view = shareImplementation(fakeImplementation()).acquire();
    expect(view.discoveredTools?.()).toEqual([]);
    expect(view.canonicalize).toBeUndefined();
    expect(view.state()).toBe('active');
    expect(view.pluginId).toBe('p');
  });
});
