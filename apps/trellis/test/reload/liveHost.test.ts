import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ERROR_CODES } from '@trellis/sdk';
import { startLiveHost, type LiveHost } from '../../src/reload/startLiveHost.ts';
import { createReloadSandbox, nextReload, waitFor, type ReloadSandbox } from './reloadFixture.ts';
import { pidsMentioning } from '@trellis/test-support';
import { SETTLED_MS } from '@trellis/registry';

let sandbox: ReloadSandbox;
let host: LiveHost | undefined;

beforeEach(() => {
  sandbox = createReloadSandbox('reload');
});
afterEach(async () => {
  await host?.close();
  host = undefined;
  sandbox.cleanup();
});

/** Maps a file (argv[1]) and, for each "set OLD NEW" line on stdin, replaces OLD by NEW in place through the map; answers "ok". */
const MMAP_WRITER = [
  'import mmap, os, sys',
  'm = mmap.mmap(os.open(sys.argv[1], os.O_RDWR), 0)',
  'for line in sys.stdin:',
  '    _, old, new = line.split()',
  '    at = m.find(old.encode())',
  '    m[at:at + len(new)] = new.encode()',
  '    print("ok", flush=True)',
].join('\n');

const pluginPids = (id: string): number[] => pidsMentioning(`${sandbox.dir}/${id}\0`);

function baseConfig(extra = ''): string {
  return `[plugins]\nallow = ["alpha", "beta"]\npaths = [${JSON.stringify(sandbox.root)}]\n${extra}`;
}

async function start(options: { watch?: boolean } = {}): Promise<LiveHost> {
  host = await startLiveHost({ configPath: sandbox.config, workspace: sandbox.dir, home: sandbox.home, env: sandbox.env, ...options });
  return host;
}

interface Where {
  pid: number;
  count: number;
  config: Record<string, unknown>;
}
const valueOf = (outcome: { ok: boolean; value?: unknown }): Where => {
  expect(outcome.ok).toBe(true);
  return outcome.value as Where;
};

describe('live host', () => {
  it('keeps an unchanged plugin’s child and its state across a reload, and restarts a changed one', { timeout: 60_000 }, async () => {
    sandbox.writePlugin('alpha');
    sandbox.writePlugin('beta');
    sandbox.writeConfig(baseConfig());
    const live = await start({ watch: false });
    expect(live.generation).toBe(1);

    expect(valueOf(await live.invoke({ name: 'alpha.where' })).count).toBe(1);
    expect(valueOf(await live.invoke({ name: 'beta.where' })).count).toBe(1);
    const alphaBefore = pluginPids('alpha');
    const betaBefore = pluginPids('beta');
    expect(alphaBefore.length).toBeGreaterThan(0);
    expect(betaBefore.length).toBeGreaterThan(0);

    // beta's config changes, alpha's does not.
    sandbox.writeConfig(baseConfig('\n[plugins.entries.beta]\nconfig = { colour = "green" }\n'));
    const result = await live.reload();
    expect(result).toMatchObject({ status: 'applied', generation: 2, previous: 1, changes: { added: [], removed: [], changed: ['beta'] } });
    expect(result.status === 'applied' ? result.changes.unchanged : []).toContain('alpha');
    expect(live.generation).toBe(2);

    const alpha = await live.invoke({ name: 'alpha.where' });
    expect(alpha.generation).toBe(2);
    expect(valueOf(alpha).count).toBe(2); // the same child, its state kept
    expect(pluginPids('alpha')).toEqual(alphaBefore);

    const beta = await live.invoke({ name: 'beta.where' });
    expect(beta.generation).toBe(2);
    expect(valueOf(beta)).toMatchObject({ count: 1, config: { colour: 'green' } }); // a new child with the new config
    // The old beta child is stopped once generation 1 has no call left.
    expect(await waitFor(() => !pluginPids('beta').some((pid) => betaBefore.includes(pid)))).toBe(true);
    expect(pluginPids('beta').length).toBeGreaterThan(0);

    await live.close();
    expect(await waitFor(() => pidsMentioning(sandbox.dir).length === 0)).toBe(true);
  });

  it(
    'an edit to a settled manifest is applied even when it keeps the size and the mtime (reads are taken over by lstat)',
    { timeout: 60_000 },
    async () => {
      sandbox.writePlugin('alpha', { version: '1.0.0' });
      sandbox.writeConfig(baseConfig());
      // Settled: a host takes over the read of a manifest left alone this long (see ManifestReadMemo).
      await new Promise((resolve) => setTimeout(resolve, SETTLED_MS + 200));
      const live = await start({ watch: false });
      // As the watcher triggers it: a reload the user asks for reads every manifest anyway.
      expect(await live.reload('watch')).toMatchObject({ status: 'unchanged' });
      const manifest = join(sandbox.root, 'alpha', 'plugin.toml');
      const before = statSync(manifest, { bigint: true });
      writeFileSync(manifest, readFileSync(manifest, 'utf8').replace('version = "1.0.0"', 'version = "1.0.1"'));
      // As `touch -d` would put it back, to the nanosecond; only the ctime tells the edit.
      const seconds = before.mtimeNs / 1_000_000_000n;
      execFileSync('touch', ['-m', '-d', `@${seconds}.${(before.mtimeNs % 1_000_000_000n).toString().padStart(9, '0')}`, manifest]);
      const after = statSync(manifest, { bigint: true });
      expect([after.size, after.mtimeNs, after.ino]).toEqual([before.size, before.mtimeNs, before.ino]);
      expect(await live.reload('watch')).toMatchObject({ status: 'applied', changes: { changed: ['alpha'] } });
      expect(live.snapshot.plugins.find((p) => p.id === 'alpha')?.manifest?.version).toBe('1.0.1');
    },
  );

  // A write through a shared memory map stamps the file's times only when a clean page is first
  // written (on tmpfs, only the first write); later writes leave ctime and mtime as they were,
  // and no watcher hears them.
  it.runIf(process.platform === 'linux' && existsSync('/dev/shm'))(
    'a reload asked for reads every manifest again: an edit through a shared memory map is applied',
    { timeout: 60_000 },
    async () => {
      const shared = mkdtempSync('/dev/shm/trellis-mmap-');
      try {
        sandbox.writePlugin('alpha', { version: '1.0.0', folder: join(shared, 'alpha') });
        sandbox.writeConfig(`[plugins]\nallow = ["alpha"]\npaths = [${JSON.stringify(shared)}]\n`);
        const manifest = join(shared, 'alpha', 'plugin.toml');
        // Mapped and written once now (that write is stamped), then left to settle.
        const mapper = spawn('python3', ['-c', MMAP_WRITER, manifest], { stdio: ['pipe', 'pipe', 'inherit'] });
        const lines = createInterface({ input: mapper.stdout! })[Symbol.asyncIterator]();
        const tell = async (line: string): Promise<void> => {
          mapper.stdin!.write(`${line}\n`);
          expect((await lines.next()).value).toBe('ok');
        };
        await tell('set 1.0.0 1.0.0');
        await new Promise((resolve) => setTimeout(resolve, SETTLED_MS + 200));
        const live = await start({ watch: false });
        const before = statSync(manifest, { bigint: true });
        await tell('set 1.0.0 1.0.1');
        mapper.stdin!.end();
        const after = statSync(manifest, { bigint: true });
        expect([after.ctimeNs, after.mtimeNs]).toEqual([before.ctimeNs, before.mtimeNs]);
        // What lstat can tell: nothing changed.
        expect(await live.reload('watch')).toMatchObject({ status: 'unchanged' });
        // SIGHUP (or reload()) reads every file again.
        expect(await live.reload('signal')).toMatchObject({ status: 'applied', changes: { changed: ['alpha'] } });
        expect(live.snapshot.plugins.find((p) => p.id === 'alpha')?.manifest?.version).toBe('1.0.1');
      } finally {
        rmSync(shared, { recursive: true, force: true });
      }
    },
  );

  it('a call started on generation N finishes on N; a disabled plugin serves no call after the swap', { timeout: 60_000 }, async () => {
    sandbox.writePlugin('alpha');
    sandbox.writePlugin('beta');
    sandbox.writeConfig(baseConfig());
    const live = await start({ watch: false });
    expect(valueOf(await live.invoke({ name: 'beta.where' })).count).toBe(1);

    const slow = live.invoke({ name: 'beta.where', input: { ms: 1500 } });
    sandbox.writeConfig(baseConfig('\n[plugins.entries.beta]\nenabled = false\n'));
    const result = await live.reload();
    expect(result).toMatchObject({ status: 'applied', generation: 2, changes: { removed: ['beta'] } });

    const after = await live.invoke({ name: 'beta.where' });
    expect(after.generation).toBe(2);
    expect(after.ok).toBe(false);
    expect(after.ok ? undefined : after.error.code).toMatch(/^TOOL_(NOT_FOUND|UNAVAILABLE)$/);

    const finished = await slow;
    expect(finished.generation).toBe(1);
    expect(valueOf(finished).count).toBe(2);
    expect(await waitFor(() => pluginPids('beta').length === 0)).toBe(true);
    expect(pluginPids('alpha')).toHaveLength(0); // never called: never started
  });

  it('a bad edit keeps the last good generation serving; fixing the file applies it', { timeout: 60_000 }, async () => {
    sandbox.writePlugin('alpha');
    sandbox.writeConfig(baseConfig());
    const live = await start();
    const rejected = nextReload(live);
    sandbox.writeConfig(baseConfig('\n[runtime]\nmax_retries = "many"\n'));
    const bad = await rejected;
    expect(bad.status).toBe('rejected');
    expect(bad.generation).toBe(1);
    expect(bad.status === 'rejected' ? bad.errors.map((e) => e.code) : []).toEqual([ERROR_CODES.CONFIG_SCHEMA]);
    expect(bad.status === 'rejected' ? bad.errors[0]?.message : '').toContain('max_retries');
    const served = await live.invoke({ name: 'alpha.where' });
    expect(served).toMatchObject({ ok: true, generation: 1 });

    const applied = nextReload(live);
    sandbox.writeConfig(baseConfig('\n[runtime]\nmax_retries = 1\n'));
    expect(await applied).toMatchObject({ status: 'applied', generation: 2 });
    expect(live.assembly.config.runtime.max_retries).toBe(1);
    const next = await live.invoke({ name: 'alpha.where' });
    expect(next).toMatchObject({ ok: true, generation: 2 });
    expect(valueOf(next).count).toBe(2);
    expect(live.status()).toMatchObject({ generation: 2, lastReload: { status: 'applied', generation: 2 } });
  });

  it('a broken manifest is rejected like a broken config, and a new plugin folder is picked up', { timeout: 60_000 }, async () => {
    sandbox.writePlugin('alpha');
    sandbox.writeConfig(baseConfig());
    const live = await start();
    const rejected = nextReload(live);
    sandbox.writePlugin('beta');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(`${sandbox.root}/beta/plugin.toml`, 'schema_version = 1\nid = "beta"\nversion = [\n');
    const bad = await rejected;
    expect(bad).toMatchObject({ status: 'rejected', generation: 1, errors: [{ code: ERROR_CODES.MANIFEST_INVALID }] });

    const applied = nextReload(live, (r) => r.status === 'applied');
    sandbox.writePlugin('beta');
    expect(await applied).toMatchObject({ status: 'applied', generation: 2, changes: { added: ['beta'] } });
    expect(await live.invoke({ name: 'beta.where' })).toMatchObject({ ok: true, generation: 2 });
  });

  it(
    'a running plugin whose config changed is handed over blue-green: its new child starts before the swap while the old one serves',
    { timeout: 60_000 },
    async () => {
      sandbox.writePlugin('alpha');
      sandbox.writePlugin('beta');
      const config = (delay: number) => baseConfig(`\n[plugins.entries.alpha]\nconfig = { handshake_delay_ms = ${delay} }\n`);
      sandbox.writeConfig(config(0));
      const live = await start({ watch: false });
      expect(valueOf(await live.invoke({ name: 'alpha.where' })).count).toBe(1);
      // The old child's processes (its isolation wrapper too, where there is one).
      const old = pluginPids('alpha');
      expect(old.length).toBeGreaterThan(0);
      const fresh = (): number[] => pluginPids('alpha').filter((pid) => !old.includes(pid));

      // The new child takes 3 s to answer its handshake: meanwhile generation 1 serves alpha on the old child.
      sandbox.writeConfig(config(3000));
      const stateAtSwap: Array<string | undefined> = [];
      live.onReload(() => stateAtSwap.push(live.status().plugins.find((p) => p.id === 'alpha')?.lifecycle));
      const reloading = live.reload();
      expect(await waitFor(() => fresh().length > 0, 10_000)).toBe(true);
      expect(live.status().swapping).toEqual([]);
      const during = await live.invoke({ name: 'alpha.where' });
      expect(during).toMatchObject({ ok: true, generation: 1 });
      expect(valueOf(during)).toMatchObject({ count: 2, config: { handshake_delay_ms: 0 } }); // the old child

      expect(await reloading).toMatchObject({ status: 'applied', generation: 2, changes: { changed: ['alpha'] }, warnings: [] });
      // At the swap the new implementation was already up: the first call after it starts nothing.
      expect(stateAtSwap).toEqual(['active']);
      const after = await live.invoke({ name: 'alpha.where' });
      expect(after).toMatchObject({ ok: true, generation: 2 });
      expect(valueOf(after)).toMatchObject({ count: 1, config: { handshake_delay_ms: 3000 } });
      expect(await waitFor(() => !pluginPids('alpha').some((pid) => old.includes(pid)))).toBe(true);
      expect(fresh().length).toBeGreaterThan(0);
      expect(pluginPids('beta')).toHaveLength(0); // never called: the reload starts nothing else
    },
  );

  it(
    'a changed plugin that was not running is not started by the reload; its calls wait for the swap instead of starting the old one',
    { timeout: 60_000 },
    async () => {
      sandbox.writePlugin('alpha');
      sandbox.writePlugin('slow', { reportedTools: true });
      const config = (colour: string, withSlow: boolean) =>
        `[plugins]\nallow = ["alpha"${withSlow ? ', "slow"' : ''}]\npaths = [${JSON.stringify(sandbox.root)}]\n\n[plugins.entries.alpha]\nconfig = { colour = "${colour}" }\n\n[plugins.entries.slow]\nconfig = { handshake_delay_ms = 3000 }\n`;
      sandbox.writeConfig(config('red', false));
      const live = await start({ watch: false });

      // The reload adds slow, whose child it starts (reported tools) and which takes 3 s to answer;
      // alpha changed while never started: its call waits for the swap, then runs on N+1.
      sandbox.writeConfig(config('blue', true));
      const reloading = live.reload();
      expect(await waitFor(() => live.status().swapping.includes('alpha'), 10_000)).toBe(true);
      const waiting = live.invoke({ name: 'alpha.where' });
      expect(await waitFor(() => live.status().waiting === 1, 10_000)).toBe(true);
      expect(pluginPids('alpha')).toEqual([]); // generation 1 does not start the config it is about to replace
      expect(await waiting).toMatchObject({ ok: true, generation: 2, value: { count: 1, config: { colour: 'blue' } } });
      expect(await reloading).toMatchObject({ status: 'applied', generation: 2, changes: { changed: ['alpha'], added: ['slow'] } });
    },
  );

  it(
    'a call to a plugin being added waits for the swap, then fails with RELOAD_TIMEOUT; other plugins are served meanwhile',
    { timeout: 60_000 },
    async () => {
      sandbox.writePlugin('alpha');
      sandbox.writePlugin('slow', { reportedTools: true });
      // A call waits for the swap as long as the serving generation's reload_queue_timeout says
      // (0.5 s); the next generation's build waits for the added plugin's start as long as its
      // own says (3 s), so the call gives up first.
      const config = (withSlow: boolean) =>
        `[plugins]\nallow = ["alpha"${withSlow ? ', "slow"' : ''}]\npaths = [${JSON.stringify(sandbox.root)}]\n\n[runtime]\nreload_queue_timeout = ${withSlow ? 3 : 0.5}\n\n[plugins.entries.slow]\nconfig = { handshake_delay_ms = 4000 }\n`;
      sandbox.writeConfig(config(false));
      const live = await start({ watch: false });
      expect(await live.invoke({ name: 'alpha.where' })).toMatchObject({ ok: true, generation: 1 });

      // The added plugin reports its tools, so the next generation starts it; it takes 4 s to answer.
      sandbox.writeConfig(config(true));
      const reloading = live.reload();
      expect(await waitFor(() => live.status().swapping.includes('slow'), 10_000)).toBe(true);
      expect(live.status().swapping).toEqual(['slow']);
      const [waited, untouched] = await Promise.all([live.invoke({ name: 'slow.where' }), live.invoke({ name: 'alpha.where' })]);
      expect(waited).toMatchObject({ ok: false, generation: 1, error: { code: ERROR_CODES.RELOAD_TIMEOUT, retryable: true } });
      expect(untouched).toMatchObject({ ok: true, generation: 1 });
      expect(await reloading).toMatchObject({ status: 'applied', generation: 2, changes: { added: ['slow'] } });
      // The build stopped waiting after 3 s: slow's tools are listed once it answers (at 4 s).
      expect(await waitFor(() => live.catalog.get('slow.where') !== undefined, 15_000)).toBe(true);
      expect(await live.invoke({ name: 'slow.where' })).toMatchObject({ ok: true, generation: 2, value: { count: 1 } });
    },
  );

  it(
    'an added plugin slow to report its tools holds a reload at most reload_queue_timeout, and no later reload',
    { timeout: 60_000 },
    async () => {
      sandbox.writePlugin('alpha');
      sandbox.writePlugin('beta');
      sandbox.writePlugin('mute', { reportedTools: true });
      const config = (withMute: boolean) =>
        `[runtime]\nreload_queue_timeout = 0.5\n\n[plugins]\nallow = ["alpha", "beta"${withMute ? ', "mute"' : ''}]\npaths = [${JSON.stringify(sandbox.root)}]\n\n[plugins.entries.mute]\nhandshake_timeout_seconds = 60\nconfig = { handshake_delay_ms = 4000 }\n`;
      sandbox.writeConfig(config(false));
      const live = await start({ watch: false });
      expect(valueOf(await live.invoke({ name: 'beta.where' })).count).toBe(1);

      // mute's child takes 4 s to answer; the build waits 0.5 s for it, then swaps without its tools.
      sandbox.writeConfig(config(true));
      const added = await live.reload();
      expect(added).toMatchObject({ status: 'applied', generation: 2, changes: { added: ['mute'] } });
      const warnings = added.status === 'applied' ? added.warnings : [];
      expect(warnings).toEqual([
        expect.objectContaining({ code: ERROR_CODES.PLUGIN_LOAD_FAILED, message: expect.stringContaining('plugin mute: still starting') }),
      ]);
      expect(live.catalog.get('mute.where')).toBeUndefined();

      // A change that must apply now (beta's folder made world-writable) does not wait for mute again.
      chmodSync(join(sandbox.root, 'beta'), 0o777);
      const unsafe = await live.reload();
      expect(unsafe).toMatchObject({ status: 'applied', generation: 3, changes: { removed: ['beta'] } });
      expect(live.assembly.lifecycle('mute')?.state).toBe('initializing');
      expect((await live.invoke({ name: 'beta.where' })).ok).toBe(false);

      // Once mute answers, its tools are listed (and the host's listeners hear of it).
      let changed = 0;
      live.onCatalogChanged(() => (changed += 1));
      expect(await waitFor(() => live.catalog.get('mute.where') !== undefined, 15_000)).toBe(true);
      expect(changed).toBeGreaterThan(0);
      expect(await live.invoke({ name: 'mute.where' })).toMatchObject({ ok: true, generation: 3 });
    },
  );

  it(
    'a new child slow to answer its handshake holds the swap at most reload_queue_timeout; its calls then wait for that start',
    { timeout: 60_000 },
    async () => {
      sandbox.writePlugin('alpha');
      // The manifest allows a long handshake; the host's bound for a hand-over is reload_queue_timeout.
      const config = (delayMs: number) =>
        `[runtime]\nreload_queue_timeout = 0.5\n\n` +
        baseConfig(`\n[plugins.entries.alpha]\ntimeout_seconds = 60\nconfig = { handshake_delay_ms = ${delayMs} }\n`);
      sandbox.writeConfig(config(0));
      const live = await start({ watch: false });
      expect(valueOf(await live.invoke({ name: 'alpha.where' })).count).toBe(1);

      sandbox.writeConfig(config(4000));
      const result = await live.reload();
      // Applied before the new child answered: its handshake takes 4 s, the bound is 0.5 s.
      expect(result).toMatchObject({ status: 'applied', generation: 2, changes: { changed: ['alpha'] } });
      const warnings = result.status === 'applied' ? result.warnings : [];
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatchObject({ code: ERROR_CODES.PLUGIN_LOAD_FAILED });
      expect(warnings[0]?.message).toContain('reload_queue_timeout');
      expect(live.assembly.lifecycle('alpha')?.state).not.toBe('active');
      // The next call is served by the new child once it answers, not refused.
      expect(await live.invoke({ name: 'alpha.where' })).toMatchObject({ ok: true, generation: 2, value: { count: 1 } });
    },
  );

  it(
    'a new child that fails its handshake beside the old one: the reload applies, warns, and the plugin restarts under its policy',
    { timeout: 60_000 },
    async () => {
      sandbox.writePlugin('alpha');
      const config = (fails: boolean) =>
        baseConfig(`\n[plugins.entries.alpha]\nrestart_delay_seconds = 0.1\nmax_restarts = 1\nconfig = { handshake_fails = ${fails} }\n`);
      sandbox.writeConfig(config(false));
      const live = await start({ watch: false });
      expect(valueOf(await live.invoke({ name: 'alpha.where' })).count).toBe(1);
      const old = pluginPids('alpha');

      sandbox.writeConfig(config(true));
      const result = await live.reload();
      expect(result).toMatchObject({ status: 'applied', generation: 2, changes: { changed: ['alpha'] } });
      const warnings = result.status === 'applied' ? result.warnings : [];
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatchObject({ code: ERROR_CODES.PLUGIN_LOAD_FAILED });
      expect(warnings[0]?.message).toContain('plugin alpha');
      expect(warnings[0]?.message).toContain('told to fail its handshake');
      // The old child stops with generation 1, as after any reload.
      expect(await waitFor(() => !pluginPids('alpha').some((pid) => old.includes(pid)))).toBe(true);
      const after = await live.invoke({ name: 'alpha.where' });
      expect(after).toMatchObject({ ok: false, generation: 2 });

      // Fixing the config applies: the next generation's child starts.
      sandbox.writeConfig(config(false));
      expect(await live.reload()).toMatchObject({ status: 'applied', generation: 3, changes: { changed: ['alpha'] } });
      expect(await live.invoke({ name: 'alpha.where' })).toMatchObject({ ok: true, generation: 3, value: { count: 1 } });
    },
  );

  it(
    'a bridged MCP server keeps its session when the bridge config is unchanged, and reconnects when it changed',
    { timeout: 60_000 },
    async () => {
      const addServer = fileURLToPath(new URL('../fixtures/mcpAddServer.mjs', import.meta.url));
      sandbox.writePlugin('alpha');
      const config = (colour: string, server: string) =>
        baseConfig(
          `\n[plugins.entries.alpha]\nconfig = { colour = "${colour}" }\n\n[plugins.entries.mcp]\nenabled = true\n\n[[plugins.entries.mcp.config.servers]]\nname = "add"\ncommand = ${JSON.stringify(process.execPath)}\nargs = [${JSON.stringify(addServer)}, ${JSON.stringify(sandbox.dir)}, "${server}"]\n`,
        );
      sandbox.writeConfig(config('red', 'one'));
      const live = await start({ watch: false });
      expect(await live.invoke({ name: 'mcp.add.add', input: { a: 1, b: 2 } })).toMatchObject({ ok: true, generation: 1 });
      const serverPids = () => pidsMentioning(`${addServer}\0${sandbox.dir}\0`);
      const before = serverPids();
      expect(before.length).toBeGreaterThan(0);

      sandbox.writeConfig(config('blue', 'one'));
      expect(await live.reload()).toMatchObject({ status: 'applied', changes: { changed: ['alpha'] } });
      expect(await live.invoke({ name: 'mcp.add.add', input: { a: 1, b: 2 } })).toMatchObject({ ok: true, generation: 2 });
      expect(serverPids()).toEqual(before);

      sandbox.writeConfig(config('blue', 'two'));
      expect(await live.reload()).toMatchObject({ status: 'applied', changes: { changed: ['mcp'] } });
      expect(await live.invoke({ name: 'mcp.add.add', input: { a: 1, b: 2 } })).toMatchObject({ ok: true, generation: 3 });
      expect(await waitFor(() => serverPids().length > 0 && !serverPids().some((pid) => before.includes(pid)))).toBe(true);
    },
  );

  it('every audit line carries the generation that served the call', { timeout: 60_000 }, async () => {
    const { readFileSync } = await import('node:fs');
    const audit = `${sandbox.dir}/audit.jsonl`;
    sandbox.writePlugin('alpha');
    const config = (retries: number) => baseConfig(`\n[runtime]\naudit_log = ${JSON.stringify(audit)}\nmax_retries = ${retries}\n`);
    sandbox.writeConfig(config(0));
    const live = await start({ watch: false });
    await live.invoke({ name: 'alpha.where', callId: 'first' });
    sandbox.writeConfig(config(1));
    expect(await live.reload()).toMatchObject({ status: 'applied', generation: 2 });
    await live.invoke({ name: 'alpha.where', callId: 'second' });
    await live.close();
    const lines = readFileSync(audit, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { callId: string; generation: number });
    expect(lines.map((line) => [line.callId, line.generation])).toEqual([
      ['first', 1],
      ['second', 2],
    ]);
  });

  it('reports a no-op edit unchanged, and applies one that changes only what the snapshot lists', { timeout: 60_000 }, async () => {
    sandbox.writePlugin('alpha');
    sandbox.writeConfig(baseConfig());
    const live = await start({ watch: false });
    sandbox.writeConfig(baseConfig());
    expect(await live.reload()).toMatchObject({ status: 'unchanged', generation: 1 });
    // A folder nobody allowed: no enabled plugin changes, but `plugins list` must show it disabled.
    sandbox.writePlugin('gamma');
    expect(await live.reload()).toMatchObject({ status: 'applied', generation: 2 });
    expect(live.assembly.snapshot.plugins.find((entry) => entry.id === 'gamma')?.state).toBe('disabled');
    expect(await live.reload()).toMatchObject({ status: 'unchanged', generation: 2 });
    // The same entries, one of them changed: the comparison must look inside each entry.
    sandbox.writePlugin('gamma', { version: '1.0.1' });
    expect(await live.reload()).toMatchObject({ status: 'applied', generation: 3 });
  });

  it('a hook added while a reload builds holds for the generation it swaps in; removed, it leaves every generation', async () => {
    sandbox.writePlugin('alpha');
    sandbox.writeConfig(baseConfig());
    const live = await start({ watch: false });
    let events = 0;
    const hook = (): void => void (events += 1);
    sandbox.writeConfig(baseConfig('[runtime]\nretry_backoff_ms = 321\n'));
    const reloading = live.reload(); // builds until its first await: the hook comes in mid-build
    const remove = live.addHook(hook);
    expect(await reloading).toMatchObject({ status: 'applied', generation: 2 });
    expect(await live.invoke({ name: 'alpha.where' })).toMatchObject({ ok: true, generation: 2 });
    expect(events).toBeGreaterThan(0);
    remove();
    const seen = events;
    expect(await live.invoke({ name: 'alpha.where' })).toMatchObject({ ok: true, generation: 2 });
    sandbox.writeConfig(baseConfig('[runtime]\nretry_backoff_ms = 322\n'));
    expect(await live.reload()).toMatchObject({ status: 'applied', generation: 3 });
    expect(await live.invoke({ name: 'alpha.where' })).toMatchObject({ ok: true, generation: 3 });
    expect(events).toBe(seen);
  });

  it('starts and closes when nothing it would watch exists yet (no config file, no plugin root)', { timeout: 60_000 }, async () => {
    const live = await startLiveHost({ workspace: sandbox.home, home: sandbox.home, env: sandbox.env });
    host = live;
    expect(live.status()).toMatchObject({ generation: 1, watching: { pluginRoots: expect.any(Array) } });
    expect(await live.invoke({ name: 'builtin-tools.echo', input: { text: 'hi' } })).toMatchObject({ ok: true, generation: 1 });
    expect(await live.reload()).toMatchObject({ status: 'unchanged', generation: 1 });
  });
});
