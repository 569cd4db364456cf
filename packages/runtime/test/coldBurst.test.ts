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
});
