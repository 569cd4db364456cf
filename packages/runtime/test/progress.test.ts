import { afterEach, describe, expect, it } from 'vitest';
import { definePlugin, defineTool, resolveContract, type HostServices, type ToolProgress } from '@trellis/sdk';
import { type BundledPluginDescriptor } from '@trellis/sdk/internal';
import { PluginManifestSchema } from '@trellis/sdk/schema';
import { z } from 'zod';
import { createBundledImplementation, createToolRuntime, type ToolRuntime } from '../src/index.ts';
import { runtimeConfig, staticCatalog } from './helpers.ts';

const host: HostServices = { plugins: () => [], explainPlugin: () => undefined, searchTools: () => [] };
const runtimes: ToolRuntime[] = [];
afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((runtime) => runtime.dispose()));
});

const plugin = definePlugin({
  manifest: { id: 'prog' },
  tools: [
    defineTool({
      name: 'steps',
      description: 'Reports three steps.',
      input: z.object({}),
      run(_input, ctx) {
        for (const progress of [1, 2, 3]) ctx.progress?.({ progress, total: 3, message: `step ${progress}` });
        return 'done';
      },
    }),
  ],
});

function runtime(): ToolRuntime {
  const descriptor: BundledPluginDescriptor = {
    packageName: '@trellis/plugin-prog',
    manifest: PluginManifestSchema.parse({ schema_version: 1, id: 'prog', name: 'prog', version: '1.0.0', kind: 'toolset' }),
    tools: [
      { name: 'steps', description: 'steps', inputSchema: { type: 'object' }, tags: [], examples: [], contract: resolveContract({}) },
    ],
    load: async () => plugin,
  };
  const impl = createBundledImplementation({ descriptor, settings: {}, workspace: { root: '/w' }, env: {}, host });
  const made = createToolRuntime({
    catalog: staticCatalog([
      { name: 'prog.steps', plugin: 'prog', tool: 'steps', inputSchema: { type: 'object' }, contract: resolveContract({}) },
    ]),
    implementations: new Map([['prog', impl]]),
    config: runtimeConfig(),
  });
  runtimes.push(made);
  return made;
}

describe('progress', () => {
  it('passes a bundled tool’s ctx.progress reports to the caller’s onProgress', async () => {
    const seen: ToolProgress[] = [];
    const outcome = await runtime().invoke({ name: 'prog.steps', input: {} }, { onProgress: (update) => seen.push(update) });
    expect(outcome).toEqual({ ok: true, value: 'done' });
    expect(seen).toEqual([
      { progress: 1, total: 3, message: 'step 1' },
      { progress: 2, total: 3, message: 'step 2' },
      { progress: 3, total: 3, message: 'step 3' },
    ]);
  });

  it('lets a tool report progress when nobody listens, and survives a listener that throws', async () => {
    const rt = runtime();
    expect(await rt.invoke({ name: 'prog.steps', input: {} })).toEqual({ ok: true, value: 'done' });
    expect(
      await rt.invoke(
        { name: 'prog.steps', input: {} },
        {
          onProgress: () => {
            throw new Error('listener broke');
          },
        },
      ),
    ).toEqual({ ok: true, value: 'done' });
  });
});
