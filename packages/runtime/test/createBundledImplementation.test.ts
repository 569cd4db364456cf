import { afterEach, describe, expect, it } from 'vitest';
import {
  definePlugin,
  defineTool,
  resolveContract,
  ToolError,
  type HostServices,
  type Logger,
  type PluginDefinition,
  type ToolContract,
  type ToolSpec,
} from '@trellis/sdk';
import { type BundledPluginDescriptor } from '@trellis/sdk/internal';
import { PluginManifestSchema } from '@trellis/sdk/schema';
import { z } from 'zod';
import { createBundledImplementation, createToolRuntime, type ToolRuntime } from '../src/index.ts';
import type { RuntimeToolDescriptor } from '../src/RuntimeCatalog.ts';
import { runtimeConfig, staticCatalog } from './helpers.ts';

const WORKER_FIXTURE = new URL('./fixtures/worker-plugin.mjs', import.meta.url).href;
const BROKEN_FIXTURE = new URL('./fixtures/broken-plugin.mjs', import.meta.url).href;
const TS_FIXTURE = new URL('./fixtures/ts-plugin.ts', import.meta.url).href;

const host: HostServices = { plugins: () => [], explainPlugin: () => undefined, searchTools: () => [] };
const runtimes: ToolRuntime[] = [];
afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((runtime) => runtime.dispose()));
});

function spec(name: string, contract: Partial<ToolContract> = {}, inputSchema: Record<string, unknown> = { type: 'object' }): ToolSpec {
  return { name, description: name, inputSchema, tags: [], examples: [], contract: resolveContract(contract) };
}

function bundled(
  id: string,
  tools: ToolSpec[],
  load: () => Promise<PluginDefinition>,
  moduleUrl?: string,
): BundledPluginDescriptor & { loads: number } {
  const descriptor = {
    packageName: `@trellis/plugin-${id}`,
    manifest: PluginManifestSchema.parse({ schema_version: 1, id, name: id, version: '1.0.0', kind: 'toolset' }),
    tools,
    moduleUrl,
    loads: 0,
    load: () => {
      descriptor.loads += 1;
      return load();
    },
  };
  return descriptor;
}

function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const log = (level: string) => (message: string, fields?: Readonly<Record<string, unknown>>) =>
    void lines.push(`${level}: ${message}${fields === undefined ? '' : ` ${JSON.stringify(fields)}`}`);
  return { lines, debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
}

function runtimeFor(
  descriptor: BundledPluginDescriptor,
  options: { settings?: unknown; logger?: Logger; limits?: { maxOldGenerationSizeMb: number }; threads?: number } = {},
) {
  const descriptors: RuntimeToolDescriptor[] = descriptor.tools.map((tool) => ({
    name: `${descriptor.manifest.id}.${tool.name}`,
    plugin: descriptor.manifest.id,
    tool: tool.name,
    inputSchema: tool.inputSchema,
    contract: tool.contract,
  }));
  const impl = createBundledImplementation({
    descriptor,
    settings: options.settings ?? { greeting: 'hello' },
    workspace: { root: '/work/space' },
    env: { HOME: '/home/test' },
    logger: options.logger,
    host,
    workerResourceLimits: options.limits,
    maxWorkerThreads: options.threads,
  });
  const runtime = createToolRuntime({
    catalog: staticCatalog(descriptors),
    implementations: new Map([[descriptor.manifest.id, impl]]),
    config: runtimeConfig(),
  });
  runtimes.push(runtime);
  return { runtime, impl };
}

describe('inline bundled tools', () => {
  let setups = 0;
  const plugin = definePlugin<{ greeting: string }>({
    manifest: { id: 'inl' },
    setup: () => {
      setups += 1;
    },
    tools: [
      defineTool({
        name: 'context',
        description: 'Shows its context.',
        input: z.object({}),
        run: (_input, ctx) => ({
          config: ctx.config,
          workspace: ctx.workspace,
          env: ctx.env,
          callId: ctx.callId,
          tool: ctx.tool,
          aborted: ctx.signal.aborted,
          plugins: ctx.host.plugins(),
        }),
      }),
      defineTool({
        name: 'resolve',
        description: 'Resolves a path.',
        input: z.object({ path: z.string() }),
        canonicalize: (input, ctx) => {
          if (input.path.startsWith('/'))
            throw new ToolError('PATH_NOT_ALLOWED', `${input.path} is absolute; give a path inside ${ctx.workspace.root}`);
          return { input: { path: `${ctx.workspace.root}/${input.path}` } };
        },
        run: (input) => input,
      }),
      defineTool({
        name: 'hang',
        description: 'Never answers.',
        input: z.object({}),
        contract: { deadlineMs: 40 },
        run: () => new Promise(() => {}),
      }),
      defineTool({
        name: 'throwNull',
        description: 'Throws null.',
        input: z.object({}),
        run: () => {
          throw null;
        },
      }),
    ],
  });
  const specs = [spec('context'), spec('resolve'), spec('hang', { deadlineMs: 40 }), spec('throwNull')];

  it('loads nothing before the first call, then loads and sets up once, and builds the tool context', async () => {
    setups = 0;
    const descriptor = bundled('inl', specs, async () => plugin as PluginDefinition);
    const { runtime, impl } = runtimeFor(descriptor);
    expect([descriptor.loads, impl.state()]).toEqual([0, 'unloaded']);
    const [first, second] = await Promise.all([
      runtime.invoke({ name: 'inl.context', callId: 'one' }),
      runtime.invoke({ name: 'inl.context', callId: 'two' }),
    ]);
    expect(first).toEqual({
      ok: true,
      value: {
        config: { greeting: 'hello' },
        workspace: { root: '/work/space' },
        env: { HOME: '/home/test' },
        callId: 'one',
        tool: 'inl.context',
        aborted: false,
        plugins: [],
      },
    });
    expect(second.ok).toBe(true);
    expect([descriptor.loads, setups, impl.state()]).toEqual([1, 1, 'active']);
  });

  it('runs the tool’s canonicalize hook so the tool gets what policy saw', async () => {
    const { runtime, impl } = runtimeFor(bundled('inl', specs, async () => plugin as PluginDefinition));
    expect(await runtime.invoke({ name: 'inl.resolve', input: { path: 'a.txt' } })).toEqual({
      ok: true,
      value: { path: '/work/space/a.txt' },
    });
    expect(await runtime.invoke({ name: 'inl.resolve', input: { path: '/etc/passwd' } })).toEqual({
      ok: false,
      error: { code: 'PATH_NOT_ALLOWED', message: '/etc/passwd is absolute; give a path inside /work/space', retryable: false },
    });
    expect([impl.canonicalizes?.('resolve'), impl.canonicalizes?.('context')]).toEqual([true, false]);
  });

  it('times out a tool that never resolves, and reports a thrown null', async () => {
    const { runtime } = runtimeFor(bundled('inl', specs, async () => plugin as PluginDefinition));
    expect(await runtime.invoke({ name: 'inl.hang' })).toEqual({
      ok: false,
      error: { code: 'TIMEOUT', message: 'inl.hang did not finish within its 40 ms deadline and was abandoned', retryable: false },
    });
    expect(await runtime.invoke({ name: 'inl.throwNull' })).toEqual({
      ok: false,
      error: {
        code: 'TOOL_THREW',
        message: 'inl.throwNull threw a non-Error value: null (a bug in the tool; a tool reports failures with ToolError)',
        retryable: false,
      },
    });
  });

  it('reports a failed setup as PLUGIN_LOAD_FAILED on every call, without trying again', async () => {
    const logger = recordingLogger();
    const descriptor = bundled(
      'inl',
      specs,
      async () => ({ ...plugin, setup: () => Promise.reject(new Error('database is locked')) }) as PluginDefinition,
    );
    const { runtime, impl } = runtimeFor(descriptor, { logger });
    const expected = {
      ok: false,
      error: {
        code: 'PLUGIN_LOAD_FAILED',
        message: 'plugin inl failed while running setup: database is locked; fix the plugin, then restart the host',
        retryable: false,
      },
    };
    expect(await runtime.invoke({ name: 'inl.context' })).toEqual(expected);
    expect(await runtime.invoke({ name: 'inl.resolve', input: { path: 'a' } })).toEqual(expected);
    expect([descriptor.loads, impl.state(), impl.lastError?.()]).toEqual([1, 'error', expected.error.message]);
    expect(logger.lines).toEqual([`error: ${expected.error.message}`]);
  });

  it('reports a module that fails to import', async () => {
    const { runtime } = runtimeFor(bundled('inl', specs, () => Promise.reject(new Error('Cannot find module zod'))));
    expect(await runtime.invoke({ name: 'inl.context' })).toEqual({
      ok: false,
      error: {
        code: 'PLUGIN_LOAD_FAILED',
        message: 'plugin inl failed while importing its module: Cannot find module zod; fix the plugin, then restart the host',
        retryable: false,
      },
    });
  });
});

describe('worker-isolated tools', () => {
  const worker = (contract: Partial<ToolContract> = {}) => ({ isolation: 'worker' as const, ...contract });
  const specs = [
    spec('add', worker(), { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] }),
    spec('spin', worker({ deadlineMs: 300 })),
    spec('hog', worker({ deadlineMs: 20_000 })),
    spec('refuse', worker()),
    spec('throwString', worker()),
    spec('fn', worker()),
    spec('resolvePath', worker(), { type: 'object', properties: { path: { type: 'string' } } }),
    spec('whoami', worker({ deadlineMs: 60_000 })),
  ];
  const noLoad = () => Promise.reject(new Error('the host thread must not import a worker-only plugin'));

  it('runs the call in a worker that imports the module itself; the host thread never loads it', async () => {
    const logger = recordingLogger();
    const descriptor = bundled('iso', specs, noLoad, WORKER_FIXTURE);
    const { runtime } = runtimeFor(descriptor, { logger });
    expect(await runtime.invoke({ name: 'iso.add', input: { a: 2, b: 3 }, callId: 'w1' })).toEqual({
      ok: true,
      value: { sum: 5, setups: 1, callId: 'w1', tool: 'iso.add', root: '/work/space', greeting: 'hello' },
    });
    expect(descriptor.loads).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 200)); // the worker's console output arrives on its own channel
    expect(logger.lines.sort()).toEqual(['debug: iso.add (worker stdout): console output from a worker tool', 'info: adding {"a":2}']);
  });

  it('terminates a CPU-bound loop at the deadline while the host keeps running', async () => {
    const { runtime } = runtimeFor(bundled('iso', specs, noLoad, WORKER_FIXTURE));
    let ticks = 0;
    const ticker = setInterval(() => (ticks += 1), 10);
    const outcome = await runtime.invoke({ name: 'iso.spin' });
    clearInterval(ticker);
    expect(outcome).toEqual({
      ok: false,
      error: { code: 'TIMEOUT', message: 'iso.spin did not finish within its 300 ms deadline and was abandoned', retryable: false },
    });
    expect(ticks).toBeGreaterThan(0);
    expect(await runtime.invoke({ name: 'iso.add', input: { a: 1, b: 1 } })).toMatchObject({ ok: true, value: { sum: 2 } });
  });

  it('replaces a worker killed at the deadline: the pool answers the next call from a fresh thread', async () => {
    const { runtime } = runtimeFor(bundled('iso', specs, noLoad, WORKER_FIXTURE), { threads: 1 });
    const before = await runtime.invoke({ name: 'iso.whoami' });
    expect(before).toMatchObject({ ok: true, value: { setups: 1 } });
    expect(await runtime.invoke({ name: 'iso.spin' })).toMatchObject({ ok: false, error: { code: 'TIMEOUT' } });
    const after = await runtime.invoke({ name: 'iso.whoami' });
    expect(after).toMatchObject({ ok: true, value: { setups: 1 } });
    const threadOf = (outcome: typeof before) => (outcome.ok ? (outcome.value as { threadId: number }).threadId : -1);
    expect(threadOf(after)).not.toBe(threadOf(before));
  });

  it('shares one pool among concurrent first calls: each worker imports and sets up the plugin once', async () => {
    const { runtime } = runtimeFor(bundled('iso', specs, noLoad, WORKER_FIXTURE), { threads: 2 });
    const outcomes = await Promise.all(Array.from({ length: 12 }, () => runtime.invoke({ name: 'iso.whoami' })));
    const values = outcomes.map((outcome) =>
      outcome.ok ? (outcome.value as { threadId: number; setups: number }) : { threadId: -1, setups: -1 },
    );
    expect(values.every((value) => value.setups === 1)).toBe(true);
    expect(new Set(values.map((value) => value.threadId)).size).toBeLessThanOrEqual(2);
  });

  it('reports a worker that runs out of memory as PLUGIN_CRASHED', async () => {
    const { runtime } = runtimeFor(bundled('iso', specs, noLoad, WORKER_FIXTURE), { limits: { maxOldGenerationSizeMb: 16 } });
    expect(await runtime.invoke({ name: 'iso.hog' })).toEqual({
      ok: false,
      error: { code: 'PLUGIN_CRASHED', message: 'iso.hog: the worker ran out of memory (limit 16 MB old generation)', retryable: false },
    });
  });

  it('maps what a worker tool throws or returns like an inline one', async () => {
    const { runtime } = runtimeFor(bundled('iso', specs, noLoad, WORKER_FIXTURE));
    expect(await runtime.invoke({ name: 'iso.refuse' })).toEqual({
      ok: false,
      error: { code: 'NOT_ALLOWED', message: 'refused in the worker', retryable: false },
    });
    expect(await runtime.invoke({ name: 'iso.throwString' })).toEqual({
      ok: false,
      error: {
        code: 'TOOL_THREW',
        message: 'iso.throwString threw a non-Error value: "worker boom" (a bug in the tool; a tool reports failures with ToolError)',
        retryable: false,
      },
    });
    expect(await runtime.invoke({ name: 'iso.fn' })).toEqual({
      ok: false,
      error: {
        code: 'OUTPUT_NOT_SERIALIZABLE',
        message: 'iso.fn returned a result that cannot be serialized: f() {} could not be cloned. (a bug in the tool)',
        retryable: false,
      },
    });
  });

  it('runs canonicalize in a worker too, and skips it for tools without a hook once known', async () => {
    const { runtime, impl } = runtimeFor(bundled('iso', specs, noLoad, WORKER_FIXTURE));
    expect(await runtime.invoke({ name: 'iso.resolvePath', input: { path: 'x' } })).toEqual({ ok: true, value: { path: '/ws/x' } });
    expect(await runtime.invoke({ name: 'iso.resolvePath', input: { path: '/x' } })).toEqual({
      ok: false,
      error: { code: 'PATH_NOT_ALLOWED', message: '/x is absolute', retryable: false },
    });
    expect(impl.canonicalizes?.('add')).toBe(true);
    await runtime.invoke({ name: 'iso.add', input: { a: 1, b: 2 } });
    expect(impl.canonicalizes?.('add')).toBe(false);
  });

  it('reports a module that fails to import in the worker, and a missing moduleUrl', async () => {
    const { runtime } = runtimeFor(bundled('iso', specs, noLoad, BROKEN_FIXTURE));
    expect(await runtime.invoke({ name: 'iso.add', input: { a: 1, b: 2 } })).toEqual({
      ok: false,
      error: {
        code: 'PLUGIN_LOAD_FAILED',
        message: `plugin iso failed to load in a worker: importing ${BROKEN_FIXTURE} failed: top-level failure in broken-plugin.mjs`,
        retryable: false,
      },
    });
    const { runtime: without } = runtimeFor(bundled('iso', specs, noLoad));
    expect(await without.invoke({ name: 'iso.add', input: { a: 1, b: 2 } })).toEqual({
      ok: false,
      error: {
        code: 'PLUGIN_LOAD_FAILED',
        message:
          'plugin iso failed to load in a worker: plugin iso marks add isolation = "worker" but its descriptor has no moduleUrl for the worker to import',
        retryable: false,
      },
    });
  });

  it('imports a TypeScript plugin module from a source checkout, workspace imports resolved to their sources', async () => {
    const { runtime } = runtimeFor(bundled('tsiso', [spec('shout', worker({ deadlineMs: 60_000 }))], noLoad, TS_FIXTURE));
    expect(await runtime.invoke({ name: 'tsiso.shout', input: { text: 'quiet' } })).toEqual({ ok: true, value: { text: 'QUIET' } });
    expect(await runtime.invoke({ name: 'tsiso.shout', input: { text: '' } })).toEqual({
      ok: false,
      error: { code: 'INVALID_ARGUMENT', message: 'text: give something to shout', retryable: false },
    });
  }, 120_000);

  it('terminates running workers on dispose', async () => {
    const { runtime } = runtimeFor(bundled('iso', [spec('spin', worker({ deadlineMs: 60_000 }))], noLoad, WORKER_FIXTURE));
    const pending = runtime.invoke({ name: 'iso.spin' });
    await new Promise((resolve) => setTimeout(resolve, 100));
    await runtime.dispose();
    expect(await pending).toEqual({
      ok: false,
      error: { code: 'ABORTED', message: 'the runtime was shut down while iso.spin was running', retryable: false },
    });
  });
});
