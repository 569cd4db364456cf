import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { childPidsMentioning } from '@trellis/test-support';
import { spawnHelperReady } from '@trellis/sdk/internal';
import { followReloads } from '../../src/reload/followReloads.ts';
import { startLiveHost, type LiveHost } from '../../src/reload/startLiveHost.ts';
import { createReloadSandbox, waitFor, type ReloadSandbox } from './reloadFixture.ts';

// A live host forks the children of later generations in its spawn helper (decision 0016). When
// the helper is lost, the children it started die with it: that is Trellis's loss, not the
// plugin's. The plugin is started again from the host without counting a restart (so neither
// max_restarts = 0 nor restart_on_crash = false disables it), its lastError names the helper, and
// the host's own warning reaches whoever listens (serve and run print it).

let sandbox: ReloadSandbox;
let host: LiveHost | undefined;

beforeEach(() => {
  sandbox = createReloadSandbox('helper-loss');
});
afterEach(async () => {
  await host?.close();
  host = undefined;
  sandbox.cleanup();
});

const config = (colour: string, strict: string, handshakeDelayMs = 0): string =>
  `[plugins]\nallow = ["beta"]\npaths = [${JSON.stringify(sandbox.root)}]\n\n[plugins.entries.beta]\n${strict}\n` +
  `config = { colour = "${colour}", handshake_delay_ms = ${handshakeDelayMs} }\n`;

const startOf = (outcome: { ok: boolean; value?: unknown }): string => {
  expect(outcome.ok, JSON.stringify(outcome)).toBe(true);
  return (outcome.value as { start: string }).start;
};

describe('a live host that loses its spawn helper', () => {
  for (const strict of ['max_restarts = 0', 'restart_on_crash = false']) {
    it(`starts the plugins the helper ran again, without counting a crash (${strict})`, { timeout: 60_000 }, async () => {
      sandbox.writePlugin('beta', { logStarts: true });
      sandbox.writeConfig(config('red', strict));
      host = await startLiveHost({
        configPath: sandbox.config,
        workspace: sandbox.dir,
        home: sandbox.home,
        env: sandbox.env,
        watch: false,
      });
      startOf(await host.invoke({ name: 'beta.where' }));
      expect(await spawnHelperReady()).toBe(true);
      const warnings: string[] = [];
      host.onWarning((message) => warnings.push(message));
      // What `serve` prints (its reload reporting, on stderr).
      const printed: string[] = [];
      const unfollow = followReloads(host, { out: () => {}, err: (text) => printed.push(text), interactive: false }, 'text');

      // A changed config restarts beta: the new child comes from the helper.
      sandbox.writeConfig(config('blue', strict));
      expect((await host.reload()).status).toBe('applied');
      const before = startOf(await host.invoke({ name: 'beta.where' }));
      expect(sandbox.spawns('beta')).toBe(2);

      const helpers = childPidsMentioning(process.pid, 'trellis-spawn-helper');
      expect(helpers).toHaveLength(1);
      process.kill(helpers[0]!, 'SIGKILL');

      // beta is started again from the host, and serves.
      expect(await waitFor(() => sandbox.spawns('beta') === 3)).toBe(true);
      let after = before;
      expect(
        await waitFor(() => {
          void host!.invoke({ name: 'beta.where' }).then((outcome) => {
            if (outcome.ok) after = (outcome.value as { start: string }).start;
          });
          return after !== before;
        }),
      ).toBe(true);
      const beta = host.status().plugins.find((plugin) => plugin.id === 'beta');
      expect(beta?.lifecycle).toBe('active');
      expect(beta?.lastError).toMatch(/stopped because the spawn helper was killed by SIGKILL \(not the plugin's fault/);
      expect(warnings.join('\n')).toMatch(/the spawn helper was killed by SIGKILL; children are started by the host from now on/);
      expect(printed.join('')).toMatch(/^trellis: warning: the spawn helper was killed by SIGKILL; children are started by the host/m);
      unfollow();
    });
  }

  it('starts again, uncounted, a plugin whose new child died with the helper during its handshake', { timeout: 60_000 }, async () => {
    sandbox.writePlugin('beta', { logStarts: true });
    sandbox.writeConfig(config('red', 'max_restarts = 0'));
    host = await startLiveHost({ configPath: sandbox.config, workspace: sandbox.dir, home: sandbox.home, env: sandbox.env, watch: false });
    startOf(await host.invoke({ name: 'beta.where' }));
    expect(await spawnHelperReady()).toBe(true);

    // The new config makes beta's next child answer its handshake after 2 s: kill the helper meanwhile.
    sandbox.writeConfig(config('blue', 'max_restarts = 0', 2_000));
    const reloading = host.reload();
    expect(await waitFor(() => sandbox.spawns('beta') === 2)).toBe(true);
    process.kill(childPidsMentioning(process.pid, 'trellis-spawn-helper')[0]!, 'SIGKILL');
    await reloading;

    // max_restarts = 0 would have disabled it, had the loss counted.
    expect(await waitFor(() => host!.status().plugins.find((plugin) => plugin.id === 'beta')?.lifecycle === 'active', 30_000)).toBe(true);
    expect(sandbox.spawns('beta')).toBe(3);
    startOf(await host.invoke({ name: 'beta.where' }));
  });
});
