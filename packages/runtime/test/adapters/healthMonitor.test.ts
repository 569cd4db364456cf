import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { realpathSync } from 'node:fs';
import type { LifecycleTransition } from '@trellis/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import type { PluginImplementation } from '../../src/PluginImplementation.ts';
import { createHttpImplementation } from '../../src/adapters/createHttpImplementation.ts';
import type { HttpRuntime } from '../../src/adapters/createHttpImplementation.ts';
import { createProcessImplementation } from '../../src/adapters/createProcessImplementation.ts';
import type { ProcessRuntime } from '../../src/adapters/createProcessImplementation.ts';
import { FIXTURES, callOf, countMarked, manifestOf, newMarker, waitFor } from './helpers.ts';

const cleanups: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The moves recorded by `onLifecycleChange`, as `from→to`. */
function recordTransitions(impl: PluginImplementation): { moves: string[]; all: LifecycleTransition[] } {
  const all: LifecycleTransition[] = [];
  impl.onLifecycleChange?.((t) => all.push(t));
  return {
    all,
    get moves() {
      return all.map((t) => `${t.from}→${t.to}`);
    },
  };
}

function processPlugin(runtime: Partial<ProcessRuntime>) {
  const dir = mkdtempSync(join(tmpdir(), 'trellis-health-'));
  const control = join(dir, 'control');
  const marker = newMarker();
  const rt: ProcessRuntime = {
    type: 'process',
    command: 'node',
    args: [join(FIXTURES, 'health-plugin.mjs'), control, `--marker=${marker}`],
    timeout_seconds: 30,
    env: {},
    restart_on_crash: true,
    max_restarts: 3,
    restart_delay_seconds: 0,
    health_check_interval_seconds: 1,
    health_check_timeout_seconds: 2,
    ...runtime,
  };
  const impl = createProcessImplementation({
    pluginId: 'fault',
    manifest: manifestOf({ runtime: rt }),
    pluginDir: realpathSync(FIXTURES),
    runtime: rt,
    env: process.env,
    shutdownGraceMs: 300,
  });
  cleanups.push(async () => {
    await impl.dispose();
    expect(countMarked(marker)).toBe(0);
    rmSync(dir, { recursive: true, force: true });
  });
  return { impl, setMood: (mood: string) => writeFileSync(control, mood) };
}

describe('health monitor: process plugins', { timeout: 120_000 }, () => {
  it('stops answering health checks: active → error → recovering → active once it answers again', async () => {
    const { impl, setMood } = processPlugin({ restart_delay_seconds: 2 });
    const seen = recordTransitions(impl);
    await impl.start();
    expect(impl.state()).toBe('active');
    setMood('mute');
    await waitFor(() => impl.state() === 'error', 60_000);
    setMood('fine'); // answers again before the restart (2 s later)
    await waitFor(() => seen.moves.includes('recovering→active'), 60_000);
    expect(seen.moves).toEqual(['unloaded→initializing', 'initializing→active', 'active→error', 'error→recovering', 'recovering→active']);
    expect(seen.all[2]).toMatchObject({
      plugin: 'fault',
      error: 'plugin fault did not answer health_check within 2 s (health_check_timeout_seconds)',
      restarts: 0,
    });
    // It stays up: a later periodic check passes and is recorded.
    await waitFor(() => impl.health?.().lastHealthCheck?.healthy === true, 30_000);
    const health = impl.health!();
    expect(health).toMatchObject({
      state: 'active',
      restarts: 1,
      maxRestarts: 3,
      lastError: 'plugin fault did not answer health_check within 2 s (health_check_timeout_seconds)',
    });
    expect(Date.parse(health.since!)).toBeGreaterThan(Date.parse(seen.all[2]!.at) - 1);
    expect(await impl.call(callOf('echo', { back: true }))).toEqual({ ok: true, value: { back: true } });
  });

  it('past max_restarts it is disabled, with the reason and the fix, and calls say so', async () => {
    const { impl, setMood } = processPlugin({ max_restarts: 1 });
    setMood('sick');
    const seen = recordTransitions(impl);
    await impl.start();
    await waitFor(() => impl.state() === 'disabled', 60_000);
    expect(seen.moves).toEqual([
      'unloaded→initializing',
      'initializing→active',
      'active→error',
      'error→recovering',
      'recovering→active',
      'active→error',
      'error→disabled',
    ]);
    const reason =
      'plugin fault reported itself unhealthy ({"id":3,"type":"health_check_response","healthy":false}); gave up after 1 restart(s) (max_restarts = 1); fix the plugin or raise [plugins.entries.fault] max_restarts, then restart the host';
    expect(impl.health!()).toMatchObject({ state: 'disabled', restarts: 1, maxRestarts: 1, lastError: reason });
    expect(impl.health!().lastHealthCheck).toMatchObject({ healthy: false });
    expect(seen.all.at(-1)).toMatchObject({ to: 'disabled', error: reason });
    expect(await impl.call(callOf('echo'))).toEqual({
      ok: false,
      notDispatched: true,
      error: { code: 'PLUGIN_UNAVAILABLE', message: `plugin fault is disabled: ${reason}`, retryable: false },
    });
  });
});

/** A real HTTP plugin on 127.0.0.1 that can be taken down and brought back on the same port. */
async function httpPlugin() {
  let server: Server | undefined;
  let port = 0;
  const up = async () => {
    const s = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c));
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        if (req.url === '/initialize') return res.end(JSON.stringify({ success: true }));
        if (req.url === '/tools')
          return res.end(JSON.stringify({ tools: [{ name: 'echo', description: 'Echo', parameters: { type: 'object' } }] }));
        if (req.url === '/health') return res.end(JSON.stringify({ healthy: true }));
        return res.end(JSON.stringify({ success: true, data: JSON.parse(body || 'null') }));
      });
    });
    await new Promise<void>((resolve) => s.listen(port, '127.0.0.1', resolve));
    port = (s.address() as AddressInfo).port;
    server = s;
  };
  const down = async () => {
    const s = server;
    server = undefined;
    if (!s) return;
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  };
  await up();
  cleanups.push(down);
  return { url: () => `http://127.0.0.1:${port}`, up, down };
}

function httpImplementation(endpoint: string, options: { maxRestarts?: number } = {}) {
  const rt: HttpRuntime = {
    type: 'http',
    endpoint,
    headers: {},
    timeout_seconds: 20,
    retry_count: 0,
    retry_delay_seconds: 0,
    max_response_bytes: 10_000,
  };
  const impl = createHttpImplementation({
    pluginId: 'notes',
    manifest: manifestOf({ id: 'notes', runtime: rt }),
    runtime: rt,
    healthCheckIntervalSeconds: 1,
    restartDelaySeconds: 1,
    ...(options.maxRestarts !== undefined ? { maxRestarts: options.maxRestarts } : {}),
  });
  cleanups.push(() => impl.dispose());
  return impl;
}

describe('health monitor: HTTP plugins', { timeout: 120_000 }, () => {
  it('its server goes down: error (calls fail fast), recovering with backoff, active when it answers again', async () => {
    const plugin = await httpPlugin();
    const impl = httpImplementation(plugin.url(), { maxRestarts: 10 });
    const seen = recordTransitions(impl);
    expect(await impl.call(callOf('echo', { n: 1 }))).toEqual({ ok: true, value: { n: 1 } });
    await plugin.down();
    await waitFor(() => impl.state() === 'error', 60_000);
    expect(impl.health!().lastHealthCheck).toMatchObject({ healthy: false });
    expect(impl.lastError?.()).toMatch(
      /^plugin notes failed its health check \(could not reach http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\)\)$/,
    );

    // While the monitor waits to re-initialize, a call does not wait out its deadline.
    const failed = await impl.call(callOf('echo', { n: 2 }));
    expect(failed).toMatchObject({ ok: false, notDispatched: true, error: { code: 'PLUGIN_UNAVAILABLE', retryable: true } });
    expect(failed.ok === false && failed.error.message).toMatch(
      /^notes\.echo is unavailable: plugin notes failed its health check .*; Trellis initializes it again in \d+ s \(see trellis status\)$/,
    );

    await plugin.up();
    await waitFor(() => impl.state() === 'active', 60_000);
    const moves = seen.all.map((t) => `${t.from}→${t.to}`);
    expect(moves.slice(0, 4)).toEqual(['unloaded→initializing', 'initializing→active', 'active→error', 'error→recovering']);
    expect(moves.at(-1)).toBe('recovering→active');
    // Only error ⇄ recovering in between (failed re-initializations while it was down).
    expect(moves.slice(4, -1).every((m) => m === 'recovering→error' || m === 'error→recovering')).toBe(true);
    expect(impl.health!().restarts).toBeGreaterThanOrEqual(1);
    expect(await impl.call(callOf('echo', { n: 3 }))).toEqual({ ok: true, value: { n: 3 } });
  });

  it('down for good: disabled past max_restarts, with the reason and the fix', async () => {
    const plugin = await httpPlugin();
    const impl = httpImplementation(plugin.url(), { maxRestarts: 1 });
    const seen = recordTransitions(impl);
    await impl.start();
    await plugin.down();
    await waitFor(() => impl.state() === 'disabled', 60_000);
    expect(seen.all.map((t) => `${t.from}→${t.to}`)).toEqual([
      'unloaded→initializing',
      'initializing→active',
      'active→error',
      'error→recovering',
      'recovering→error',
      'error→disabled',
    ]);
    const reason = impl.lastError?.() ?? '';
    expect(reason).toMatch(
      /^plugin notes: POST \/initialize could not reach http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\); gave up after 1 re-initialization\(s\) \(max_restarts = 1\); fix the service at http:\/\/127\.0\.0\.1:\d+ or raise \[plugins\.entries\.notes\] max_restarts, then restart the host$/,
    );
    expect(impl.health!()).toMatchObject({ state: 'disabled', restarts: 1, maxRestarts: 1 });
    expect(await impl.call(callOf('echo'))).toEqual({
      ok: false,
      notDispatched: true,
      error: { code: 'PLUGIN_UNAVAILABLE', message: `plugin notes is disabled: ${reason}`, retryable: false },
    });
  });
});

describe('health monitor: an HTTP plugin broken by a call', { timeout: 120_000 }, () => {
  it('is brought back by the monitor (error → recovering → active) without waiting for the next call', async () => {
    let failNext = true;
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        if (req.url === '/tools/echo' && failNext) {
          failNext = false;
          res.writeHead(503, { 'content-type': 'application/json' });
          return res.end(JSON.stringify({ error: 'busy' }));
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        if (req.url === '/health') return res.end(JSON.stringify({ healthy: true }));
        if (req.url === '/tools') return res.end(JSON.stringify({ tools: [] }));
        return res.end(JSON.stringify({ success: true, data: 'ok' }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    });
    const impl = httpImplementation(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    const seen = recordTransitions(impl);
    const failed = await impl.call(callOf('echo'));
    expect(failed).toMatchObject({ ok: false, error: { code: 'HTTP_ERROR' } });
    expect(impl.state()).toBe('error');
    await waitFor(() => impl.state() === 'active', 30_000);
    expect(seen.moves).toEqual(['unloaded→initializing', 'initializing→active', 'active→error', 'error→recovering', 'recovering→active']);
    expect(impl.health!()).toMatchObject({ restarts: 0, lastHealthCheck: { healthy: true } });
  });
});
