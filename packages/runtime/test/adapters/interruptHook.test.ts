// The process adapter hears of a call's interruption through `ImplementationCall.onInterrupt`
// when the call offers it (the runtime's calls do), and then never reads the call's `signal`:
// the runtime creates that AbortSignal only when read, and creating it with a listener cost more
// host CPU than the rest of a process-plugin round trip (docs/decisions/0011-stall-and-burst.md).
import { realpathSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ImplementationCall, PluginImplementation } from '../../src/PluginImplementation.ts';
import { createProcessImplementation } from '../../src/adapters/createProcessImplementation.ts';
import type { ProcessRuntime } from '../../src/adapters/createProcessImplementation.ts';
import { createToolRuntime, type ToolRuntime } from '../../src/index.ts';
import { descriptor, runtimeConfig, staticCatalog } from '../helpers.ts';
import { FIXTURES, countMarked, manifestOf, newMarker, recordingLogger } from './helpers.ts';

const pluginDir = realpathSync(FIXTURES);
const live: Array<{ impl: PluginImplementation; marker: string }> = [];
const runtimes: ToolRuntime[] = [];

afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((runtime) => runtime.dispose()));
  for (const { impl, marker } of live.splice(0)) {
    await impl.dispose();
    expect(countMarked(marker)).toBe(0);
  }
});

function setup(mode: string) {
  const marker = newMarker();
  const logger = recordingLogger();
  const rt: ProcessRuntime = {
    type: 'process',
    command: 'node',
    args: [join(FIXTURES, 'fault-plugin.mjs'), mode, `--marker=${marker}`],
    timeout_seconds: 30,
    env: {},
    restart_on_crash: true,
    max_restarts: 3,
    restart_delay_seconds: 0,
    health_check_interval_seconds: 0,
  };
  const impl = createProcessImplementation({
    pluginId: 'fault',
    manifest: manifestOf({ runtime: rt }),
    pluginDir,
    runtime: rt,
    env: process.env,
    logger,
    shutdownGraceMs: 300,
  });
  live.push({ impl, marker });
  const spawns = () => logger.entries.filter((e) => e.message === 'plugin spawned').length;
  return { impl, spawns };
}

/** A call shaped like the runtime's: `signal` made on first read (counted), an `onInterrupt` hook. */
function hookedCall(tool: string, input: unknown = {}) {
  const listeners = new Set<() => void>();
  let controller: AbortController | undefined;
  let signalReads = 0;
  const call: ImplementationCall & { interrupt(): void; readonly signalReads: number } = {
    tool,
    input,
    callId: `hook-${tool}`,
    deadlineAt: performance.now() + 30_000,
    get signal() {
      signalReads += 1;
      return (controller ??= new AbortController()).signal;
    },
    onInterrupt(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    interrupt() {
      for (const listener of [...listeners]) listener();
    },
    get signalReads() {
      return signalReads;
    },
  };
  return call;
}

describe('process adapter: interruption through onInterrupt', () => {
  it('serves calls without reading their signal, and unsubscribes when each reply arrives', async () => {
    const { impl } = setup('normal');
    await impl.start();
    const calls = [1, 2, 3].map((n) => hookedCall('echo', { n }));
    const outcomes = await Promise.all(calls.map((call) => impl.call(call)));
    expect(outcomes).toEqual([1, 2, 3].map((n) => ({ ok: true, value: { n } })));
    expect(calls.map((call) => call.signalReads)).toEqual([0, 0, 0]);
    // Unsubscribed on the reply: a late interruption reaches nothing and changes nothing.
    calls[0]!.interrupt();
    expect(await impl.call(hookedCall('echo', { after: true }))).toEqual({ ok: true, value: { after: true } });
  });

  it('stops a request as soon as the hook fires, though the signal never aborts', async () => {
    const { impl } = setup('normal');
    await impl.start();
    const call = hookedCall('hang');
    const pending = impl.call(call);
    // Let the request reach the child first.
    expect(await impl.call(hookedCall('echo', { n: 1 }))).toEqual({ ok: true, value: { n: 1 } });
    call.interrupt();
    expect(await pending).toEqual({
      ok: false,
      error: { code: 'ABORTED', message: 'fault.hang was aborted by the caller (no reply)', retryable: false },
    });
  });

  it("the runtime's call runs its onInterrupt listeners once when interrupted, at once when already interrupted", async () => {
    let heard = 0;
    let late = 0;
    let seen: ImplementationCall | undefined;
    let started!: () => void;
    const dispatched = new Promise<void>((resolve) => (started = resolve));
    const impl: PluginImplementation = {
      pluginId: 'slow',
      start: async () => {},
      state: () => 'active',
      dispose: async () => {},
      call: (call) => {
        seen = call;
        started();
        return new Promise((resolve) => {
          call.onInterrupt?.(() => {
            heard += 1;
            resolve({ ok: true, value: 'too late' });
          });
        });
      },
    };
    const runtime = createToolRuntime({
      config: runtimeConfig(),
      catalog: staticCatalog([descriptor('slow.wait')]),
      implementations: new Map([['slow', impl]]),
    });
    runtimes.push(runtime);
    const controller = new AbortController();
    const pending = runtime.invoke({ name: 'slow.wait', input: {} }, { signal: controller.signal });
    await dispatched;
    controller.abort();
    const outcome = await pending;
    expect(outcome.ok === false && outcome.error.code).toBe('ABORTED');
    expect(heard).toBe(1);
    seen!.onInterrupt!(() => (late += 1));
    expect(late).toBe(1);
  });

  it('through the runtime: a caller abort reaches a plugin that does not echo ids, which is replaced', async () => {
    const { impl, spawns } = setup('serial');
    const runtime = createToolRuntime({
      config: runtimeConfig({ tool_timeout_seconds: 30 }),
      catalog: staticCatalog([descriptor('fault.hang'), descriptor('fault.echo')]),
      implementations: new Map([['fault', impl]]),
    });
    runtimes.push(runtime);
    expect(await runtime.invoke({ name: 'fault.echo', input: { n: 0 } })).toEqual({ ok: true, value: { n: 0 } });
    const controller = new AbortController();
    const pending = runtime.invoke({ name: 'fault.hang', input: {} }, { signal: controller.signal });
    await new Promise((resolve) => setTimeout(resolve, 100));
    controller.abort();
    const outcome = await pending;
    expect(outcome.ok === false && outcome.error.code).toBe('ABORTED');
    // The channel heard of it: its unanswered request would shift every later reply, so the next
    // call goes to a fresh child (and is answered by it, not by a stale reply).
    expect(await runtime.invoke({ name: 'fault.echo', input: { n: 2 } })).toEqual({ ok: true, value: { n: 2 } });
    expect(spawns()).toBe(2);
  });
});
