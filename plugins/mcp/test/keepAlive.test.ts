import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { ERROR_CODES, silentLogger, type LifecycleTransition, type ToolSource } from '@trellis/sdk';
import { createKeepAliveHost, type KeepAliveHost } from '@trellis/sdk/internal';
import { isAlive } from '@trellis/test-support';
import { createMcpToolSource, type McpToolSourceOptions } from '../src/createMcpToolSource.ts';
import { McpSettingsSchema } from '../src/settings.ts';
import { TINY_SERVER, makeTempDir, toolContext, waitFor } from './helpers.ts';

type Source = ReturnType<typeof createMcpToolSource>;

const cleanups: Array<() => Promise<void> | void> = [];
const startedPids: number[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  for (const pid of startedPids.splice(0)) expect(await waitFor(() => !isAlive(pid), 10_000), `pid ${pid} still alive`).toBe(true);
});

function sandbox(): { dir: string; keepAlive: KeepAliveHost; make: (servers: unknown[], extra?: Partial<McpToolSourceOptions>) => Source } {
  const dir = makeTempDir();
  cleanups.push(dir.remove);
  const keepAlive = createKeepAliveHost();
  const make = (servers: unknown[], extra: Partial<McpToolSourceOptions> = {}): Source => {
    const source = createMcpToolSource({
      settings: McpSettingsSchema.parse({ servers }),
      env: { PATH: process.env.PATH, HOME: process.env.HOME },
      workspaceRoot: dir.path,
      logger: silentLogger,
      stateDir: join(dir.path, 'state'),
      backoffMs: 200,
      keepAlive: keepAlive.forPlugin('mcp'),
      ...extra,
    });
    cleanups.push(() => source.close());
    return source;
  };
  return { dir: dir.path, keepAlive, make };
}

function track(source: Source): Record<string, number> {
  const pids = source.pids();
  for (const pid of Object.values(pids)) if (!startedPids.includes(pid)) startedPids.push(pid);
  return pids;
}

async function call(
  source: ToolSource,
  tool: string,
  input: unknown = {},
): Promise<{ ok: true; value: unknown } | { ok: false; code: string; message: string }> {
  try {
    return { ok: true, value: await source.call(tool, input, toolContext(AbortSignal.timeout(20_000), `mcp.${tool}`)) };
  } catch (error) {
    const e = error as { code?: string; message: string };
    return { ok: false, code: e.code ?? 'THROWN', message: e.message };
  }
}

const tiny = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  command: process.execPath,
  args: [TINY_SERVER],
  health_check_interval_seconds: 0,
  ...extra,
});

describe('bridged servers kept across generations', { timeout: 120_000 }, () => {
  it('a second source with the same entry shares the running server; a changed entry gets its own; the last holder closes it', async () => {
    const { make } = sandbox();
    const first = make([tiny('one'), tiny('two')]);
    await first.start({ mode: 'refresh' });
    const before = track(first);
    expect(Object.keys(before).sort()).toEqual(['one', 'two']);

    // The next generation: `one` unchanged but for its filter, `two` with another argument.
    const second = make([tiny('one', { exclude_tools: ['fail'] }), tiny('two', { args: [TINY_SERVER, 'v2'] })]);
    await second.start({ mode: 'refresh' });
    const after = track(second);
    expect(after.one).toBe(before.one);
    expect(after.two).not.toBe(before.two);
    expect(second.list().map((tool) => tool.name)).not.toContain('one.fail');
    expect(await call(second, 'one.add', { a: 1, b: 2 })).toEqual({ ok: true, value: { sum: 3 } });

    // The old generation closes: what the new one holds keeps running, the rest ends.
    await first.close();
    expect(isAlive(before.two!)).toBe(false);
    expect(isAlive(before.one!)).toBe(true);
    expect(await call(second, 'one.add', { a: 2, b: 2 })).toEqual({ ok: true, value: { sum: 4 } });
    await second.close();
    expect(await waitFor(() => !isAlive(before.one!))).toBe(true);
  });

  it('a server failing past max_restarts is disabled with the way back; a reload gives it a fresh start', async () => {
    const { dir, keepAlive, make } = sandbox();
    // A server program that fails at every start until the test "fixes" it.
    const program = join(dir, 'server.mjs');
    writeFileSync(program, 'process.exit(1);\n');
    const source = make([{ name: 'flaky', command: process.execPath, args: [program], health_check_interval_seconds: 0, max_restarts: 1 }]);
    const transitions: LifecycleTransition[] = [];
    source.onLifecycleChange!((t) => transitions.push(t));
    await source.start({ mode: 'refresh' });
    expect(await waitFor(() => source.health().find((p) => p.name === 'flaky')?.state === 'disabled', 30_000)).toBe(true);
    expect(transitions.map((t) => `${t.from}→${t.to}`)).toEqual([
      'unloaded→initializing',
      'initializing→error',
      'error→recovering',
      'recovering→error',
      'error→disabled',
    ]);
    const report = source.health().find((p) => p.name === 'flaky')!;
    expect(report).toMatchObject({ state: 'disabled', restarts: 1, maxRestarts: 1 });
    expect(report.lastError).toMatch(
      /^failed to start: .*; gave up after 1 reconnect\(s\) \(max_restarts = 1\); fix the server, then change its \[\[plugins\.entries\.mcp\.config\.servers\]\] entry or reload the host \(SIGHUP to trellis serve or run\) to try again$/,
    );
    // Its problem and a direct call name the server and say it is disabled; no new try is made.
    expect(source.problems?.()).toEqual([
      { code: ERROR_CODES.PLUGIN_UNAVAILABLE, message: `mcp server flaky is disabled: ${report.lastError}` },
    ]);
    const refused = await call(source, 'flaky.add', { a: 1, b: 1 });
    expect(refused).toEqual({
      ok: false,
      code: ERROR_CODES.PLUGIN_UNAVAILABLE,
      message: `mcp.flaky.add is unavailable: mcp server flaky is disabled: ${report.lastError}`,
    });
    expect(source.health().find((p) => p.name === 'flaky')?.state).toBe('disabled');

    // The server is fixed; the host reloads: a fresh start with a fresh count.
    writeFileSync(program, `await import(${JSON.stringify(pathToFileURL(TINY_SERVER).href)});\n`);
    keepAlive.reloaded();
    expect(await waitFor(() => source.health().find((p) => p.name === 'flaky')?.state === 'active', 30_000)).toBe(true);
    track(source);
    expect(source.health().find((p) => p.name === 'flaky')).toMatchObject({ state: 'active', restarts: 0 });
    expect(transitions.slice(5).map((t) => `${t.from}→${t.to}`)).toEqual([
      'disabled→unloaded',
      'unloaded→initializing',
      'initializing→active',
    ]);
    expect(await waitFor(() => source.list().some((tool) => tool.name === 'flaky.add' && tool.unavailable === undefined))).toBe(true);
    expect(await call(source, 'flaky.add', { a: 1, b: 1 })).toEqual({ ok: true, value: { sum: 2 } });
  });

  it('a session that stayed up resets the restart count (as for process plugins); without that, the next loss disables', async () => {
    const kills = async (source: Source, times: number): Promise<void> => {
      for (let i = 0; i < times; i += 1) {
        const pid = track(source).tiny!;
        process.kill(-pid, 'SIGKILL');
        const settled = await waitFor(() => {
          const state = source.health().find((p) => p.name === 'tiny')?.state;
          return state === 'disabled' || (state === 'active' && source.pids().tiny !== pid);
        }, 30_000);
        expect(settled).toBe(true);
        if (source.health().find((p) => p.name === 'tiny')?.state === 'disabled') return;
      }
    };
    const { make } = sandbox();
    const stable = make([tiny('tiny', { max_restarts: 1 })], { stableUptimeMs: 0 });
    await stable.start({ mode: 'refresh' });
    await kills(stable, 3);
    expect(stable.health().find((p) => p.name === 'tiny')).toMatchObject({ state: 'active', restarts: 1 });
    track(stable);

    const { make: makeOther } = sandbox();
    const strict = makeOther([tiny('tiny', { max_restarts: 1 })]);
    await strict.start({ mode: 'refresh' });
    await kills(strict, 3);
    expect(strict.health().find((p) => p.name === 'tiny')).toMatchObject({ state: 'disabled', restarts: 1 });
  });
});
