import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger, type LifecycleTransition } from '@trellis/sdk';
import { createMcpToolSource } from '../src/createMcpToolSource.ts';
import { McpSettingsSchema } from '../src/settings.ts';
import { TINY_SERVER, makeTempDir, toolContext, waitFor } from './helpers.ts';
import { isAlive } from '@trellis/test-support';

const cleanups: Array<() => Promise<void> | void> = [];
const startedPids: number[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  for (const pid of startedPids.splice(0)) expect(await waitFor(() => !isAlive(pid), 10_000), `pid ${pid} still alive`).toBe(true);
});

function makeSource(server: Record<string, unknown>) {
  const dir = makeTempDir();
  cleanups.push(dir.remove);
  const source = createMcpToolSource({
    settings: McpSettingsSchema.parse({
      servers: [
        { name: 'tiny', command: process.execPath, args: [TINY_SERVER], ...server },
        { name: 'broken', command: 'x', url: 'https://e.x' },
      ],
    }),
    env: { PATH: process.env.PATH, HOME: process.env.HOME },
    workspaceRoot: dir.path,
    logger: silentLogger,
    stateDir: join(dir.path, 'state'),
    backoffMs: 200,
  });
  cleanups.push(() => source.close());
  const transitions: LifecycleTransition[] = [];
  source.onLifecycleChange!((t) => transitions.push(t));
  const moves = () => transitions.filter((t) => t.part === 'tiny').map((t) => `${t.from}→${t.to}`);
  const track = () => {
    const pid = source.pids().tiny;
    if (pid !== undefined && !startedPids.includes(pid)) startedPids.push(pid);
    return pid;
  };
  return { source, transitions, moves, track };
}

const tinyHealth = (source: ReturnType<typeof makeSource>['source']) => source.health().find((p) => p.name === 'tiny');

describe('the mcp bridge reports each server through the lifecycle', { timeout: 120_000 }, () => {
  it('a server killed: active → error → recovering → active, in a new process, and it serves again', async () => {
    const { source, transitions, moves, track } = makeSource({ health_check_interval_seconds: 0 });
    await source.start({ mode: 'refresh' });
    const before = track()!;
    expect(tinyHealth(source)).toMatchObject({ name: 'tiny', state: 'active', restarts: 0 });
    // An unusable entry is disabled with its problem, beside the working one.
    expect(source.health().find((p) => p.name === 'broken')).toEqual({
      name: 'broken',
      state: 'disabled',
      lastError: 'server "broken" sets both command and url; keep command (stdio) or url (Streamable HTTP)',
      restarts: 0,
    });
    process.kill(-before, 'SIGKILL');
    expect(
      await waitFor(
        () => source.pids().tiny !== undefined && source.pids().tiny !== before && tinyHealth(source)?.state === 'active',
        30_000,
      ),
    ).toBe(true);
    track();
    expect(moves()).toEqual(['unloaded→initializing', 'initializing→active', 'active→error', 'error→recovering', 'recovering→active']);
    expect(transitions.find((t) => t.to === 'error')).toMatchObject({
      plugin: 'mcp',
      part: 'tiny',
      error: 'the connection closed (the server exited or hung up)',
    });
    expect(tinyHealth(source)).toMatchObject({
      state: 'active',
      restarts: 1,
      lastError: 'the connection closed (the server exited or hung up)',
    });
    const value = await source.call('tiny.add', { a: 2, b: 3 }, toolContext(AbortSignal.timeout(20_000), 'mcp.tiny.add'));
    expect(value).toEqual({ sum: 5 });
  });

  it('a server that stops answering ping (SIGSTOP) is found by the health check, replaced, and active again', async () => {
    const { source, moves, track } = makeSource({ health_check_interval_seconds: 1, timeout_seconds: 3 });
    await source.start({ mode: 'refresh' });
    const before = track()!;
    await waitFor(() => tinyHealth(source)?.lastHealthCheck?.healthy === true, 30_000);
    expect(tinyHealth(source)?.lastHealthCheck).toMatchObject({ healthy: true });
    process.kill(-before, 'SIGSTOP');
    expect(await waitFor(() => moves().includes('active→error'), 60_000)).toBe(true);
    expect(tinyHealth(source)?.lastHealthCheck).toMatchObject({
      healthy: false,
      message: expect.stringMatching(/^did not answer ping within timeout_seconds = 3 \(/),
    });
    expect(
      await waitFor(
        () => source.pids().tiny !== undefined && source.pids().tiny !== before && tinyHealth(source)?.state === 'active',
        60_000,
      ),
    ).toBe(true);
    track();
    expect(isAlive(before)).toBe(false);
    expect(moves().slice(0, 5)).toEqual([
      'unloaded→initializing',
      'initializing→active',
      'active→error',
      'error→recovering',
      'recovering→active',
    ]);
  });
});
