import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { definePlugin, defineTool, resolveContract, type PluginDefinition } from '@trellis/sdk';
import { PluginManifestSchema } from '@trellis/sdk/schema';
import { z } from 'zod';
import { createBundledImplementation, createToolRuntime, type ToolRuntime } from '../src/index.ts';
import { descriptor, fakeImplementation, runtimeConfig, staticCatalog } from './helpers.ts';

const runtimes: ToolRuntime[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(runtimes.splice(0).map((runtime) => runtime.dispose()));
});

describe('a burst of first calls', () => {
  it('compiles the schema once and every call succeeds', async () => {
    // Every draft 2020-12 engine compiles through this prototype, whichever cache made it.
    const compile = vi.spyOn(Ajv2020.prototype, 'compile');
    const echo = descriptor('demo.echo', { inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } });
    const impl = fakeImplementation('demo', { echo: (input) => input });
    const runtime = createToolRuntime({
      config: runtimeConfig({ max_concurrency: 1000 }),
      catalog: staticCatalog([echo]),
      implementations: new Map([['demo', impl]]),
    });
    runtimes.push(runtime);
    const outcomes = await Promise.all(
      Array.from({ length: 200 }, (_, i) => runtime.invoke({ name: 'demo.echo', input: { text: `t${i}` } })),
    );
    expect(outcomes.filter((o) => !o.ok)).toEqual([]);
    expect(outcomes[199]).toEqual({ ok: true, value: { text: 't199' } });
    expect(compile).toHaveBeenCalledTimes(1);
  });

  it('to a bundled plugin: its module is imported, its setup run and its schema compiled once for the whole burst', async () => {
    const compile = vi.spyOn(Ajv2020.prototype, 'compile');
    let loads = 0;
    let setups = 0;
    const plugin = definePlugin({
      manifest: { id: 'burst' },
      setup: () => {
        setups += 1;
      },
      tools: [defineTool({ name: 'echo', description: 'Echo.', input: z.object({ text: z.string() }), run: (input) => input })],
    });
    const inputSchema = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] };
    const contract = resolveContract({});
    const impl = createBundledImplementation({
      descriptor: {
        packageName: '@trellis/plugin-burst',
        manifest: PluginManifestSchema.parse({ schema_version: 1, id: 'burst', name: 'burst', version: '1.0.0', kind: 'toolset' }),
        tools: [{ name: 'echo', description: 'Echo.', inputSchema, tags: [], examples: [], contract }],
        load: async () => {
          loads += 1;
          // A slow import: every call of the burst arrives while it is still loading.
          await new Promise((resolve) => setTimeout(resolve, 50));
          return plugin as PluginDefinition;
        },
      },
      settings: {},
      workspace: { root: '/work/space' },
      env: {},
      host: { plugins: () => [], explainPlugin: () => undefined, searchTools: () => [] },
    });
    const runtime = createToolRuntime({
      config: runtimeConfig({ max_concurrency: 1000 }),
      catalog: staticCatalog([{ name: 'burst.echo', plugin: 'burst', tool: 'echo', inputSchema, contract, source: 'bundled' }]),
      implementations: new Map([['burst', impl]]),
    });
    runtimes.push(runtime);
    const outcomes = await Promise.all(
      Array.from({ length: 500 }, (_, i) => runtime.invoke({ name: 'burst.echo', input: { text: `t${i}` } })),
    );
    expect(outcomes.filter((o) => !o.ok)).toEqual([]);
    expect(outcomes[499]).toEqual({ ok: true, value: { text: 't499' } });
    expect([loads, setups, compile.mock.calls.length]).toEqual([1, 1, 1]);
  });

  it('holds each call waiting in a full plugin’s queue as a small record, not a suspended async frame', async () => {
    // Each suspended async frame of the old path held ~1.6 KB per queued call; a parked call is
    // its Invocation, its CallContext and the caller's promise.
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const releases: Array<() => void> = [];
    const impl = fakeImplementation('q', { work: () => new Promise<string>((resolve) => releases.push(() => resolve('done'))) });
    const runtime = createToolRuntime({
      config: runtimeConfig({ max_concurrency: 1 }),
      catalog: staticCatalog([descriptor('q.work')]),
      implementations: new Map([['q', impl]]),
    });
    runtimes.push(runtime);
    // Warm: the validator is loaded and the schema compiled before the measured burst.
    const warmUp = runtime.invoke({ name: 'q.work', input: {} });
    while (releases.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    releases.shift()?.();
    expect(await warmUp).toEqual({ ok: true, value: 'done' });
    const requests = Array.from({ length: 10_000 }, (_, i) => ({ name: 'q.work', input: {}, callId: `c${i}` }));
    gc();
    const before = process.memoryUsage().heapUsed;
    const pending = requests.map((request) => runtime.invoke(request));
    gc();
    const perCall = (process.memoryUsage().heapUsed - before) / requests.length;
    expect(impl.dispatches.work).toBe(2); // the warm-up call and the one holding the only slot
    expect(perCall).toBeLessThan(1000);
    // They all still run, one at a time, in order.
    const order: string[] = [];
    for (const [i, promise] of pending.entries()) void promise.then(() => order.push(requests[i]!.callId));
    while (order.length < requests.length) {
      releases.shift()?.();
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(order).toEqual(requests.map((r) => r.callId));
    expect(await pending[9_999]).toEqual({ ok: true, value: 'done' });
  });

  it('ends calls waiting for the validator’s first load or in the queue when they are aborted, and runs the rest', async () => {
    const compile = vi.spyOn(Ajv2020.prototype, 'compile');
    const releases: Array<() => void> = [];
    const impl = fakeImplementation('q', { work: () => new Promise<string>((resolve) => releases.push(() => resolve('done'))) });
    const runtime = createToolRuntime({
      config: runtimeConfig({ max_concurrency: 1 }),
      catalog: staticCatalog([descriptor('q.work', { inputSchema: { type: 'object', properties: { n: { type: 'number' } } } })]),
      implementations: new Map([['q', impl]]),
    });
    runtimes.push(runtime);
    const controllers = Array.from({ length: 200 }, () => new AbortController());
    // Every call arrives before the validator has loaded; the odd ones are aborted while they wait for it.
    const pending = controllers.map((controller, n) => runtime.invoke({ name: 'q.work', input: { n } }, { signal: controller.signal }));
    for (const [n, controller] of controllers.entries()) if (n % 2 === 1) controller.abort();
    const aborted = await Promise.all(pending.filter((_, n) => n % 2 === 1));
    expect(aborted.every((o) => !o.ok && o.error.code === 'ABORTED')).toBe(true);
    expect(impl.dispatches.work ?? 0).toBeLessThanOrEqual(1);
    // Of the rest, call 0 holds the slot and the others queue; abort two queued ones.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(impl.dispatches.work).toBe(1);
    controllers[2]!.abort();
    controllers[198]!.abort();
    expect(await pending[2]).toMatchObject({ ok: false, error: { code: 'ABORTED' } });
    expect(await pending[198]).toMatchObject({ ok: false, error: { code: 'ABORTED' } });
    let settled = 0;
    for (const promise of pending) void promise.then(() => (settled += 1));
    while (settled < pending.length) {
      releases.shift()?.();
      await new Promise((resolve) => setImmediate(resolve));
    }
    const outcomes = await Promise.all(pending);
    expect(outcomes.filter((o) => o.ok)).toHaveLength(98);
    expect(impl.dispatches.work).toBe(98);
    expect(compile).toHaveBeenCalledTimes(1);
  });

  it('ends every parked call with ABORTED when the runtime is disposed', async () => {
    const impl = fakeImplementation('q', { work: () => new Promise<string>(() => {}) });
    const runtime = createToolRuntime({
      config: runtimeConfig({ max_concurrency: 1 }),
      catalog: staticCatalog([descriptor('q.work')]),
      implementations: new Map([['q', impl]]),
    });
    // Parked for the validator (first calls), then in the queue behind a call that never ends.
    const first = Array.from({ length: 50 }, () => runtime.invoke({ name: 'q.work', input: {} }));
    await new Promise((resolve) => setTimeout(resolve, 20));
    const queued = Array.from({ length: 50 }, () => runtime.invoke({ name: 'q.work', input: {} }));
    await runtime.dispose();
    const outcomes = await Promise.all([...first, ...queued]);
    expect(outcomes.every((o) => !o.ok && o.error.code === 'ABORTED')).toBe(true);
    expect(impl.dispatches.work).toBe(1);
  });

  it('with a validator compiled ahead of time: parks for nothing and compiles nothing, and still refuses a bad input', async () => {
    const inputSchema = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] };
    const validate = new Ajv2020({ allErrors: true, strict: false }).compile(inputSchema);
    const compile = vi.spyOn(Ajv2020.prototype, 'compile');
    const impl = fakeImplementation('demo', { echo: (input) => input });
    const echo = descriptor('demo.echo', { inputSchema });
    const runtime = createToolRuntime({
      config: runtimeConfig({ max_concurrency: 1000 }),
      catalog: staticCatalog([echo]),
      implementations: new Map([['demo', impl]]),
      precompiled: new Map([[echo.inputSchema, { validate, hash: 'h', fillsDefaults: false }]]),
    });
    runtimes.push(runtime);
    // Every call reaches the implementation in the same tick: none waited for a validator.
    const outcomes = Array.from({ length: 100 }, (_, i) => runtime.invoke({ name: 'demo.echo', input: { text: `t${i}` } }));
    expect(impl.dispatches.echo).toBe(100);
    expect((await Promise.all(outcomes)).every((o) => o.ok)).toBe(true);
    expect(await runtime.invoke({ name: 'demo.echo', input: { text: 1 } })).toEqual({
      ok: false,
      error: { code: 'INPUT_INVALID', message: 'invalid arguments for demo.echo:\n/text: must be string', retryable: false },
    });
    expect(compile).not.toHaveBeenCalled();
  });

  it('to a bundled plugin whose build listed the tools with a canonicalize hook: no call waits for the load to learn it has none', async () => {
    let loads = 0;
    let release: (() => void) | undefined;
    const plugin = definePlugin({
      manifest: { id: 'burst' },
      tools: [
        defineTool({ name: 'echo', description: 'Echo.', input: z.object({}), run: (input) => input }),
        defineTool({
          name: 'norm',
          description: 'Normalizes.',
          input: z.object({}),
          canonicalize: (input) => ({ input }),
          run: (input) => input,
        }),
      ],
    });
    const contract = resolveContract({});
    const tools = ['echo', 'norm'].map((name) => ({
      name,
      description: name,
      inputSchema: { type: 'object' },
      tags: [],
      examples: [],
      contract,
    }));
    const impl = createBundledImplementation({
      descriptor: {
        packageName: '@trellis/plugin-burst',
        manifest: PluginManifestSchema.parse({ schema_version: 1, id: 'burst', name: 'burst', version: '1.0.0', kind: 'toolset' }),
        tools,
        canonicalizing: ['norm'],
        load: async () => {
          loads += 1;
          await new Promise<void>((resolve) => (release = resolve));
          return plugin as PluginDefinition;
        },
      },
      settings: {},
      workspace: { root: '/work/space' },
      env: {},
      host: { plugins: () => [], explainPlugin: () => undefined, searchTools: () => [] },
    });
    expect([impl.canonicalizes?.('echo'), impl.canonicalizes?.('norm'), impl.state()]).toEqual([false, true, 'unloaded']);
    expect(loads).toBe(0);
    const runtime = createToolRuntime({
      config: runtimeConfig({ max_concurrency: 2 }),
      catalog: staticCatalog(
        tools.map((t) => ({
          name: `burst.${t.name}`,
          plugin: 'burst',
          tool: t.name,
          inputSchema: t.inputSchema,
          contract,
          source: 'bundled',
        })),
      ),
      implementations: new Map([['burst', impl]]),
    });
    runtimes.push(runtime);
    const outcomes = [
      ...Array.from({ length: 50 }, () => runtime.invoke({ name: 'burst.echo', input: {} })),
      runtime.invoke({ name: 'burst.norm', input: {} }),
    ];
    while (release === undefined) await new Promise((resolve) => setTimeout(resolve, 5));
    release();
    expect((await Promise.all(outcomes)).every((o) => o.ok)).toBe(true);
    expect(loads).toBe(1);
  });
});
