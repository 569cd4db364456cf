import { appendFileSync, chmodSync, chownSync, linkSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { realWorkspacePath, saveTrustStore, trustStorePath } from '@trellis/config';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NOBODY, pidsMentioning, spawnAsNobody } from '@trellis/test-support';
import { startLiveHost, type LiveHost, type ReloadResult } from '../../src/reload/startLiveHost.ts';
import { createReloadSandbox, nextReload, waitFor, type ReloadSandbox } from './reloadFixture.ts';

// What a running host must notice on its own (no SIGHUP): a change of who may write a plugin's
// files is a change of what the host may run, even when no byte of a manifest changed. Editors and
// attackers alike change modes, owners and links without touching a file's content, and chokidar
// reports only content changes (it compares mtimes), so these went unnoticed until the next edit.

let sandbox: ReloadSandbox;
let host: LiveHost | undefined;

beforeEach(() => {
  sandbox = createReloadSandbox('attack');
});
afterEach(async () => {
  await host?.close();
  host = undefined;
  sandbox.cleanup();
});

async function startWatching(): Promise<LiveHost> {
  host = await startLiveHost({ configPath: sandbox.config, workspace: sandbox.dir, home: sandbox.home, env: sandbox.env, debounceMs: 100 });
  return host;
}

const stateOf = (live: LiveHost, id: string) => live.snapshot.plugins.find((p) => p.id === id);

async function expectRejectedOnItsOwn(
  live: LiveHost,
  change: () => void,
  id: string,
  code: string,
  state: 'rejected' | 'disabled' = 'rejected',
): Promise<ReloadResult> {
  expect(stateOf(live, id)?.state).toBe('enabled');
  expect((await live.invoke({ name: `${id}.where` })).ok).toBe(true);
  const reloaded = nextReload(live, (r) => r.status === 'applied');
  change();
  const result = await Promise.race([reloaded, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 15_000))]);
  expect(result, 'the watcher did not notice the change').toBeDefined();
  expect(result).toMatchObject({ status: 'applied', changes: { removed: [id] } });
  expect(stateOf(live, id)).toMatchObject({ state });
  expect(stateOf(live, id)?.reasons[0]?.code).toBe(code);
  const after = await live.invoke({ name: `${id}.where` });
  expect(after.ok).toBe(false);
  // Its process stops once the old generation has drained.
  expect(await waitFor(() => pidsMentioning(`${sandbox.dir}/${id}\0`).length === 0)).toBe(true);
  return result!;
}

describe('a live host notices who may write its plugins', () => {
  it('rejects a plugin whose folder became world-writable after start, without a SIGHUP', { timeout: 60_000 }, async () => {
    sandbox.writePlugin('alpha');
    sandbox.writeConfig(`[plugins]\nallow = ["alpha"]\npaths = [${JSON.stringify(sandbox.root)}]\n`);
    const live = await startWatching();
    await expectRejectedOnItsOwn(live, () => chmodSync(join(sandbox.root, 'alpha'), 0o777), 'alpha', 'WORLD_WRITABLE');
  });

  it('rejects a plugin whose manifest became world-writable', { timeout: 60_000 }, async () => {
    sandbox.writePlugin('alpha');
    sandbox.writeConfig(`[plugins]\nallow = ["alpha"]\npaths = [${JSON.stringify(sandbox.root)}]\n`);
    const live = await startWatching();
    await expectRejectedOnItsOwn(live, () => chmodSync(join(sandbox.root, 'alpha', 'plugin.toml'), 0o666), 'alpha', 'WORLD_WRITABLE');
  });

  it('rejects every plugin of a root that became world-writable', { timeout: 60_000 }, async () => {
    sandbox.writePlugin('alpha');
    sandbox.writeConfig(`[plugins]\nallow = ["alpha"]\npaths = [${JSON.stringify(sandbox.root)}]\n`);
    const live = await startWatching();
    await expectRejectedOnItsOwn(live, () => chmodSync(sandbox.root, 0o777), 'alpha', 'WORLD_WRITABLE');
  });

  it('rejects a plugin whose manifest gained a second name (a hard link)', { timeout: 60_000 }, async () => {
    sandbox.writePlugin('alpha');
    sandbox.writeConfig(`[plugins]\nallow = ["alpha"]\npaths = [${JSON.stringify(sandbox.root)}]\n`);
    mkdirSync(join(sandbox.dir, 'elsewhere'));
    const live = await startWatching();
    await expectRejectedOnItsOwn(
      live,
      () => linkSync(join(sandbox.root, 'alpha', 'plugin.toml'), join(sandbox.dir, 'elsewhere', 'plugin.toml')),
      'alpha',
      'UNSAFE_FILE',
    );
  });

  it('refuses its config file once it gains a second name or becomes world-writable, with no edit', { timeout: 60_000 }, async () => {
    sandbox.writePlugin('alpha');
    sandbox.writeConfig(`[plugins]\nallow = ["alpha"]\npaths = [${JSON.stringify(sandbox.root)}]\n`);
    mkdirSync(join(sandbox.dir, 'elsewhere'));
    const live = await startWatching();
    // Not a byte of the file changes: only its own watch hears of a new link or a new mode.
    const rejected = (needle: string) => nextReload(live, (r) => r.status === 'rejected' && JSON.stringify(r.errors).includes(needle));
    const linked = rejected('hard links');
    linkSync(sandbox.config, join(sandbox.dir, 'elsewhere', 'runtime.toml'));
    expect(await Promise.race([linked, new Promise((resolve) => setTimeout(() => resolve('no reload'), 15_000))])).toMatchObject({
      status: 'rejected',
    });
    // The last good generation serves on.
    expect((await live.invoke({ name: 'alpha.where' })).ok).toBe(true);
    rmSync(join(sandbox.dir, 'elsewhere', 'runtime.toml'));
    const writable = rejected('any user can write it');
    chmodSync(sandbox.config, 0o666);
    expect(await Promise.race([writable, new Promise((resolve) => setTimeout(() => resolve('no reload'), 15_000))])).toMatchObject({
      status: 'rejected',
    });
    // Fixed without an edit either: the next reload applies.
    const fixed = nextReload(live, (r) => r.status !== 'rejected');
    chmodSync(sandbox.config, 0o644);
    expect(await Promise.race([fixed, new Promise((resolve) => setTimeout(() => resolve('no reload'), 15_000))])).toMatchObject({
      status: expect.stringMatching(/^(applied|unchanged)$/),
    });
  });

  it.runIf(process.getuid?.() === 0)('rejects a plugin whose manifest was given to another user', { timeout: 60_000 }, async () => {
    sandbox.writePlugin('alpha');
    sandbox.writeConfig(`[plugins]\nallow = ["alpha"]\npaths = [${JSON.stringify(sandbox.root)}]\n`);
    const live = await startWatching();
    await expectRejectedOnItsOwn(
      live,
      () => chownSync(join(sandbox.root, 'alpha', 'plugin.toml'), NOBODY, NOBODY),
      'alpha',
      'UNSAFE_OWNER',
    );
  });

  it('notices plugins nested below a root, down to the deepest folder discovery reads', { timeout: 60_000 }, async () => {
    sandbox.writePlugin('alpha', { folder: join(sandbox.root, 'team', 'alpha') });
    // MAX_PLUGIN_DEPTH (4) folders below the root.
    sandbox.writePlugin('deep', { folder: join(sandbox.root, 'a', 'b', 'c', 'deep') });
    sandbox.writeConfig(`[plugins]\nallow = ["alpha", "deep"]\npaths = [${JSON.stringify(sandbox.root)}]\n`);
    const live = await startWatching();
    await expectRejectedOnItsOwn(live, () => chmodSync(join(sandbox.root, 'team', 'alpha'), 0o777), 'alpha', 'WORLD_WRITABLE');
    await expectRejectedOnItsOwn(
      live,
      () => chmodSync(join(sandbox.root, 'a', 'b', 'c', 'deep', 'plugin.toml'), 0o666),
      'deep',
      'WORLD_WRITABLE',
    );
  });

  it('follows a root nested in another root, whichever comes first in paths', { timeout: 60_000 }, async () => {
    // The outer root's walk skips *.disabled, so the plugin is found through the inner root only.
    const inner = join(sandbox.root, 'vendor.disabled');
    sandbox.writePlugin('alpha', { folder: join(inner, 'alpha') });
    sandbox.writeConfig(`[plugins]\nallow = ["alpha"]\npaths = [${JSON.stringify(sandbox.root)}, ${JSON.stringify(inner)}]\n`);
    const live = await startWatching();
    await expectRejectedOnItsOwn(live, () => chmodSync(join(inner, 'alpha'), 0o777), 'alpha', 'WORLD_WRITABLE');
  });

  it('does not reload while a nested plugin writes files and folders in its own tree', { timeout: 60_000 }, async () => {
    const folder = join(sandbox.root, 'team', 'alpha');
    sandbox.writePlugin('alpha', { folder });
    sandbox.writeConfig(`[plugins]\nallow = ["alpha"]\npaths = [${JSON.stringify(sandbox.root)}]\n`);
    const live = await startWatching();
    let reloads = 0;
    live.onReload(() => (reloads += 1));
    for (let i = 0; i < 10; i += 1) {
      mkdirSync(join(folder, 'data', `run-${i}`), { recursive: true });
      writeFileSync(join(folder, 'data', `run-${i}`, 'out.log'), `line ${i}\n`);
      writeFileSync(join(folder, 'cache.log'), `line ${i}\n`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const reloaded = nextReload(live);
    appendFileSync(join(folder, 'plugin.toml'), '# edited\n');
    await reloaded;
    expect(reloads).toBe(1);
  });

  it('stops a plugin made world-writable while the config is broken, and still reports the config', { timeout: 60_000 }, async () => {
    sandbox.writePlugin('alpha');
    sandbox.writePlugin('beta');
    const good = `[plugins]\nallow = ["alpha", "beta"]\npaths = [${JSON.stringify(sandbox.root)}]\n`;
    sandbox.writeConfig(good);
    const live = await startWatching();
    expect((await live.invoke({ name: 'beta.where' })).ok).toBe(true);

    // A half-saved config: rejected, and nothing else changed, so generation 1 keeps serving.
    const broken = nextReload(live);
    sandbox.writeConfig(`${good}\n[runtime\n`);
    expect(await broken).toMatchObject({ status: 'rejected', generation: 1, errors: [expect.objectContaining({ code: 'TOML_SYNTAX' })] });

    // Now beta's folder becomes world-writable: stopped under the last good config, the config
    // error still said.
    const result = await expectRejectedOnItsOwn(live, () => chmodSync(join(sandbox.root, 'beta'), 0o777), 'beta', 'WORLD_WRITABLE');
    expect(result).toMatchObject({ generation: 2, changes: { unchanged: expect.arrayContaining(['alpha']) } });
    expect(result).toMatchObject({
      warnings: [],
      notApplied: [{ code: 'TOML_SYNTAX', message: expect.stringContaining('(generation 2 keeps the last config that worked)') }],
    });
    expect((await live.invoke({ name: 'alpha.where' })).ok).toBe(true);

    // Fixing the config applies it as usual.
    const fixed = nextReload(live);
    sandbox.writeConfig(`${good}\n[runtime]\nmax_retries = 1\n`);
    expect(await fixed).toMatchObject({ status: 'applied', generation: 3, warnings: [] });
    expect(live.assembly.config.runtime.max_retries).toBe(1);
  });

  it(
    'stops a plugin made world-writable while another manifest is broken; the broken one serves as it was',
    { timeout: 60_000 },
    async () => {
      sandbox.writePlugin('alpha');
      sandbox.writePlugin('beta');
      sandbox.writeConfig(`[plugins]\nallow = ["alpha", "beta"]\npaths = [${JSON.stringify(sandbox.root)}]\n`);
      const live = await startWatching();
      const count = async (): Promise<number> => {
        const outcome = await live.invoke({ name: 'beta.where' });
        expect(outcome.ok).toBe(true);
        return (outcome as { value: { count: number } }).value.count;
      };
      expect(await count()).toBe(1);

      // beta's manifest saved half-way: nothing else changed, so the reload is rejected and beta
      // keeps serving, on the same child.
      const broken = nextReload(live);
      writeFileSync(join(sandbox.root, 'beta', 'plugin.toml'), 'schema_version = 1\nid = "beta"\nversion = [\n');
      expect(await broken).toMatchObject({
        status: 'rejected',
        generation: 1,
        errors: [{ code: 'MANIFEST_INVALID', message: expect.stringMatching(/^plugin beta: .*plugin\.toml: .*last valid plugin\.toml$/) }],
      });
      expect(await count()).toBe(2);

      // alpha's folder becomes world-writable: stopped at once; beta's broken manifest holds
      // nothing back, and beta goes on serving with its last valid manifest.
      const result = await expectRejectedOnItsOwn(live, () => chmodSync(join(sandbox.root, 'alpha'), 0o777), 'alpha', 'WORLD_WRITABLE');
      expect(result).toMatchObject({ generation: 2, changes: { unchanged: expect.arrayContaining(['beta']), changed: [] } });
      expect(result).toMatchObject({
        warnings: [],
        notApplied: [
          { code: 'MANIFEST_INVALID', message: expect.stringMatching(/^plugin beta: .*plugin\.toml: .*last valid plugin\.toml$/) },
        ],
      });
      expect(stateOf(live, 'beta')?.state).toBe('enabled');
      expect(await count()).toBe(3);

      // Fixed, with a new version: applied, and beta restarts on its new manifest.
      const fixed = nextReload(live, (r) => r.status === 'applied');
      sandbox.writePlugin('beta', { version: '1.1.0' });
      expect(await fixed).toMatchObject({ status: 'applied', generation: 3, changes: { changed: ['beta'] }, warnings: [], notApplied: [] });
      expect(stateOf(live, 'beta')?.manifest?.version).toBe('1.1.0');
      expect(await count()).toBe(1);
    },
  );

  it(
    'never runs a manifest another user wrote while the plugin was stopped, once its file is safe and broken',
    { timeout: 60_000 },
    async () => {
      sandbox.writePlugin('alpha');
      chmodSync(sandbox.dir, 0o755); // nobody must reach the manifest
      sandbox.writeConfig(`[plugins]\nallow = ["alpha"]\npaths = [${JSON.stringify(sandbox.root)}]\n`);
      const live = await startWatching();
      const manifest = join(sandbox.root, 'alpha', 'plugin.toml');
      const original = readFileSync(manifest, 'utf8');
      const writeAsNobody = (text: string): void => {
        const written = spawnAsNobody('sh', ['-c', 'printf %s "$1" > "$0"', manifest, text], { cwd: sandbox.dir });
        expect(written.status, written.stderr).toBe(0);
      };
      // Made world-writable: stopped.
      await expectRejectedOnItsOwn(live, () => chmodSync(manifest, 0o666), 'alpha', 'WORLD_WRITABLE');
      // Another user writes a manifest of their own (a build sees it, still rejected), then garbage.
      const settle = async (): Promise<void> => {
        const reloaded = nextReload(live);
        await reloaded;
        await new Promise((resolve) => setTimeout(resolve, 500)); // and any trailing burst
      };
      let settled = settle();
      writeAsNobody(original.replace(`${sandbox.dir}/alpha`, `${sandbox.dir}/evil`));
      await settled;
      expect(stateOf(live, 'alpha')?.reasons[0]?.code).toBe('WORLD_WRITABLE');
      settled = settle();
      writeAsNobody('id = "alpha"\nversion = [\n');
      await settled;
      // The owner makes the file safe again, as the error says: it is judged as it is, broken, and
      // with nothing else changed the reload is rejected for it; alpha stays stopped.
      const results: ReloadResult[] = [];
      live.onReload((r) => void results.push(r));
      settled = settle();
      chmodSync(manifest, 0o644);
      await settled;
      expect(results.map((r) => r.status)).toEqual(['rejected']);
      expect(results[0]).toMatchObject({
        errors: [expect.objectContaining({ code: 'MANIFEST_INVALID', message: expect.stringMatching(/^plugin alpha: /) })],
      });
      expect(stateOf(live, 'alpha')?.state).toBe('rejected');
      expect((await live.invoke({ name: 'alpha.where' })).ok).toBe(false);
      expect(pidsMentioning(`${sandbox.dir}/evil`)).toEqual([]);
    },
  );

  it('does not say a broken copy keeps serving when a copy in a root that wins serves instead', { timeout: 60_000 }, async () => {
    const envRoot = join(sandbox.dir, 'env-plugins');
    sandbox.writePlugin('alpha', { folder: join(envRoot, 'alpha') });
    sandbox.writeConfig(`[plugins]\nallow = ["alpha"]\npaths = [${JSON.stringify(sandbox.root)}]\n`);
    const env = { ...sandbox.env, TRELLIS_PLUGIN_PATH: envRoot };
    host = await startLiveHost({ configPath: sandbox.config, workspace: sandbox.dir, home: sandbox.home, env, watch: false });
    expect((await host.invoke({ name: 'alpha.where' })).ok).toBe(true);
    // One edit breaks the env root's copy and adds a valid one to the explicit root, which wins.
    writeFileSync(join(envRoot, 'alpha', 'plugin.toml'), 'schema_version = 1\nid = "alpha"\nversion = [\n');
    sandbox.writePlugin('alpha');
    const result = await host.reload();
    expect(result).toMatchObject({ status: 'applied', changes: { changed: ['alpha'] } });
    expect(result.status === 'applied' ? result.notApplied : []).toEqual([
      { code: 'MANIFEST_INVALID', message: expect.stringMatching(/^plugin alpha: .*env-plugins\/alpha\/plugin\.toml: [^;]*$/) },
    ]);
    expect(stateOf(host, 'alpha')?.pluginDir).toBe(join(sandbox.root, 'alpha'));
  });

  it('notices a folder made world-writable when it polls ([runtime] config_poll_interval)', { timeout: 60_000 }, async () => {
    sandbox.writePlugin('alpha');
    sandbox.writeConfig(
      `[runtime]\nconfig_poll_interval = 0.2\n\n[plugins]\nallow = ["alpha"]\npaths = [${JSON.stringify(sandbox.root)}]\n`,
    );
    const live = await startWatching();
    await expectRejectedOnItsOwn(live, () => chmodSync(join(sandbox.root, 'alpha'), 0o777), 'alpha', 'WORLD_WRITABLE');
  });

  it('does not reload while a plugin writes files in its own folder', { timeout: 60_000 }, async () => {
    sandbox.writePlugin('alpha');
    sandbox.writeConfig(`[plugins]\nallow = ["alpha"]\npaths = [${JSON.stringify(sandbox.root)}]\n`);
    const live = await startWatching();
    let reloads = 0;
    live.onReload(() => (reloads += 1));
    for (let i = 0; i < 20; i += 1) {
      writeFileSync(join(sandbox.root, 'alpha', 'cache.log'), `line ${i}\n`);
      chmodSync(join(sandbox.root, 'alpha', 'cache.log'), i % 2 === 0 ? 0o600 : 0o644);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // A change that does count, to know the watcher is live and the writes above were seen as noise.
    const reloaded = nextReload(live);
    appendFileSync(join(sandbox.root, 'alpha', 'plugin.toml'), '# edited\n');
    await reloaded;
    expect(reloads).toBe(1);
  });

  it("stops a workspace plugin when its workspace's trust is revoked while it runs", { timeout: 60_000 }, async () => {
    const workspace = join(sandbox.dir, 'ws');
    mkdirSync(join(workspace, '.trellis', 'plugins'), { recursive: true });
    sandbox.writePlugin('wsp');
    renameSync(join(sandbox.root, 'wsp'), join(workspace, '.trellis', 'plugins', 'wsp'));
    writeFileSync(join(workspace, '.trellis', 'runtime.toml'), '[plugins]\nallow = ["wsp"]\n');
    sandbox.writeConfig(`[plugins]\npaths = [${JSON.stringify(sandbox.root)}]\n`);
    const store = trustStorePath(join(sandbox.home, '.config', 'trellis'));
    saveTrustStore(store, { version: 1, workspaces: [{ path: realWorkspacePath(workspace), trusted_at: new Date().toISOString() }] });
    host = await startLiveHost({ configPath: sandbox.config, workspace, home: sandbox.home, env: sandbox.env, debounceMs: 100 });
    // `trellis trust --revoke` writes the store this way (a temp file renamed over it).
    await expectRejectedOnItsOwn(
      host,
      () => saveTrustStore(store, { version: 1, workspaces: [] }),
      'wsp',
      'WORKSPACE_UNTRUSTED',
      'disabled',
    );
  });

  it('keeps ignoring an untrusted workspace whose runtime.toml and plugin appear while it runs', { timeout: 60_000 }, async () => {
    const workspace = join(sandbox.dir, 'ws');
    mkdirSync(join(workspace, '.trellis', 'plugins'), { recursive: true });
    sandbox.writeConfig(`[plugins]\npaths = [${JSON.stringify(sandbox.root)}]\n`);
    const live = (host = await startLiveHost({
      configPath: sandbox.config,
      workspace,
      home: sandbox.home,
      env: sandbox.env,
      debounceMs: 100,
    }));
    const reloaded = nextReload(live);
    sandbox.writePlugin('wsp');
    renameSync(join(sandbox.root, 'wsp'), join(workspace, '.trellis', 'plugins', 'wsp'));
    writeFileSync(join(workspace, '.trellis', 'runtime.toml'), '[plugins]\nallow = ["wsp"]\n\n[runtime]\nreload_queue_timeout = 123\n');
    expect((await reloaded).status).not.toBe('rejected');
    expect(stateOf(live, 'wsp')).toMatchObject({ state: 'disabled' });
    expect(stateOf(live, 'wsp')?.reasons[0]?.code).toBe('WORKSPACE_UNTRUSTED');
    expect(live.assembly.config.runtime.reload_queue_timeout).toBe(5);
    expect((await live.invoke({ name: 'wsp.where' })).ok).toBe(false);
    expect(pidsMentioning(`${sandbox.dir}/wsp\0`)).toEqual([]);
  });
});
