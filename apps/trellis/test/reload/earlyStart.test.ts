import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pidsMentioning } from '@trellis/test-support';
import { startLiveHost, type LiveHost } from '../../src/reload/startLiveHost.ts';
import { createReloadSandbox, waitFor, type ReloadSandbox } from './reloadFixture.ts';

// A reload that changes a running plugin's [plugins.entries.<id>] starts its new child as soon as
// the new config is read, beside the build (planEarlyStarts). These tests count the children each
// plugin started (`starts.log`): the early child is the one that serves when the build agrees, and
// is stopped, unused, when it does not.

let sandbox: ReloadSandbox;
let host: LiveHost | undefined;

beforeEach(() => {
  sandbox = createReloadSandbox('early');
});
afterEach(async () => {
  await host?.close();
  host = undefined;
  sandbox.cleanup();
});

const config = (extra = ''): string => `[plugins]\nallow = ["alpha", "beta"]\npaths = [${JSON.stringify(sandbox.root)}]\n${extra}`;
const betaConfig = (colour: string): string => config(`\n[plugins.entries.beta]\nconfig = { colour = "${colour}" }\n`);

async function startWithBetaRunning(): Promise<LiveHost> {
  sandbox.writePlugin('alpha');
  sandbox.writePlugin('beta', { logStarts: true });
  sandbox.writeConfig(betaConfig('red'));
  host = await startLiveHost({ configPath: sandbox.config, workspace: sandbox.dir, home: sandbox.home, env: sandbox.env, watch: false });
  const first = await host.invoke({ name: 'beta.where' });
  expect(first.ok).toBe(true);
  expect(sandbox.starts('beta')).toHaveLength(1);
  return host;
}

/** Which child answered: its `start` id (see reload-plugin.mjs). */
const startOf = (outcome: { ok: boolean; value?: unknown }): string => {
  expect(outcome.ok).toBe(true);
  return (outcome.value as { start: string }).start;
};
/** Host pids of beta's children (their command lines name beta's tag). */
const betaPids = (): number[] => pidsMentioning(`${sandbox.dir}/beta\0`);

describe('a reload starts a changed plugin’s new child early', () => {
  it('serves with the child it started early: one new child, not two', { timeout: 60_000 }, async () => {
    const live = await startWithBetaRunning();
    const before = betaPids();
    sandbox.writeConfig(betaConfig('green'));
    expect(await live.reload()).toMatchObject({ status: 'applied', changes: { changed: ['beta'] } });
    const starts = sandbox.starts('beta');
    expect(starts).toHaveLength(2);
    const served = await live.invoke({ name: 'beta.where' });
    expect(startOf(served)).toBe(starts[1]);
    expect(served.ok ? served.value : served.error).toMatchObject({ count: 1, config: { colour: 'green' } });
    expect(sandbox.starts('beta')).toHaveLength(2);
    expect(await waitFor(() => !betaPids().some((pid) => before.includes(pid)))).toBe(true);
  });

  it('stops the early child unused when the same edit also changed the manifest', { timeout: 60_000 }, async () => {
    const live = await startWithBetaRunning();
    // How many host processes one running child takes (the launcher's wrapper may add one).
    const afterOneChild = betaPids().length;
    sandbox.writePlugin('beta', { logStarts: true, version: '1.1.0' });
    sandbox.writeConfig(betaConfig('green'));
    expect(await live.reload()).toMatchObject({ status: 'applied', changes: { changed: ['beta'] } });
    // The first child, the early one (old manifest, new config), and the one the new manifest asked for.
    const starts = sandbox.starts('beta');
    expect(starts).toHaveLength(3);
    const served = await live.invoke({ name: 'beta.where' });
    expect(startOf(served)).toBe(starts[2]);
    // The first and the early child are both stopped: one child is left, the one that serves.
    expect(await waitFor(() => betaPids().length > 0 && betaPids().length === afterOneChild)).toBe(true);
  });

  it('stops the early child when the reload is rejected, and the old one keeps serving', { timeout: 60_000 }, async () => {
    const live = await startWithBetaRunning();
    const [first] = sandbox.starts('beta');
    const before = betaPids();
    writeFileSync(join(sandbox.root, 'alpha', 'plugin.toml'), 'schema_version = 1\nid = "alpha"\nkind = [broken\n');
    sandbox.writeConfig(betaConfig('green'));
    expect(await live.reload()).toMatchObject({ status: 'rejected', generation: 1 });
    // The early child may be stopped before it ever ran its first line: only the first child is left.
    expect(await waitFor(() => JSON.stringify(betaPids()) === JSON.stringify(before))).toBe(true);
    const served = await live.invoke({ name: 'beta.where' });
    expect(startOf(served)).toBe(first);
    expect(served.ok ? served.value : served.error).toMatchObject({ count: 2, config: { colour: 'red' } });
  });

  it('starts nothing early for a plugin the same edit disables', { timeout: 60_000 }, async () => {
    const live = await startWithBetaRunning();
    sandbox.writeConfig(config('\n[plugins.entries.beta]\nenabled = false\nconfig = { colour = "green" }\n'));
    expect(await live.reload()).toMatchObject({ status: 'applied', changes: { removed: ['beta'] } });
    expect(sandbox.starts('beta')).toHaveLength(1);
    await live.close();
    expect(await waitFor(() => pidsMentioning(sandbox.dir).length === 0)).toBe(true);
  });
});
