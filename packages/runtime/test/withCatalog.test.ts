import { afterEach, describe, expect, it } from 'vitest';
import { createResourceCatalog } from '@trellis/catalog';
import { definePlugin, resolveContract, type PluginDefinition, type ToolSpec } from '@trellis/sdk';
import { type BundledPluginDescriptor } from '@trellis/sdk/internal';
import { PluginManifestSchema } from '@trellis/sdk/schema';
import { createBundledImplementation, createToolRuntime, type ToolRuntime } from '../src/index.ts';
import { runtimeConfig } from './helpers.ts';

const runtimes: ToolRuntime[] = [];
afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((runtime) => runtime.dispose()));
});

function plugin(id: string, tools: Array<{ spec: ToolSpec; run: (input: unknown) => unknown }>): BundledPluginDescriptor {
  const definition = definePlugin({
    manifest: { id },
    tools: tools.map(({ spec, run }) => ({ name: spec.name, description: spec.description, input: undefined as never, run })),
  });
  return {
    packageName: `@trellis/plugin-${id}`,
    manifest: PluginManifestSchema.parse({ schema_version: 1, id, name: id, version: '1.0.0', kind: 'toolset' }),
    tools: tools.map(({ spec }) => spec),
    load: async () => definition as PluginDefinition,
  };
}

const spec = (name: string, capabilities: string[] = []): ToolSpec => ({
  name,
  description: `The ${name} tool.`,
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, additionalProperties: false },
  tags: [],
  examples: [],
  contract: resolveContract({ capabilities }),
});

describe('with the real ResourceCatalog', () => {
  it('runs offered tools and reports the catalog’s verdicts with the runtime’s codes', async () => {
    const tools = plugin('tools', [
      { spec: spec('echo'), run: (input) => input },
      { spec: spec('fetch', ['net.outbound']), run: () => 'fetched' },
    ]);
    const off = plugin('off', [{ spec: spec('hidden'), run: () => 'never' }]);
    const config = runtimeConfig({ capabilities: ['fs.read'] });
    const catalog = createResourceCatalog({
      snapshot: {
        plugins: [
          { id: 'tools', state: 'enabled', bundled: true, reasons: [], manifest: tools.manifest },
          {
            id: 'off',
            state: 'disabled',
            bundled: true,
            reasons: [{ code: 'NOT_IN_PROFILE', message: 'off is not in profile minimal; add it to [plugins] allow' }],
            manifest: off.manifest,
          },
        ],
      },
      bundled: [tools, off],
      config,
    });
    const host = { plugins: () => [], explainPlugin: () => undefined, searchTools: () => [] };
    const implementations = (id: string) =>
      [tools, off]
        .filter((d) => d.manifest.id === id)
        .map((descriptor) => createBundledImplementation({ descriptor, settings: {}, workspace: { root: '/w' }, env: {}, host }))[0];
    const runtime = createToolRuntime({ catalog, implementations, config });
    runtimes.push(runtime);

    expect(await runtime.invoke({ name: 'tools.echo', input: { text: 'hi' } })).toEqual({ ok: true, value: { text: 'hi' } });
    expect(await runtime.invoke({ name: 'tools.echo', input: { text: 1 } })).toEqual({
      ok: false,
      error: { code: 'INPUT_INVALID', message: 'invalid arguments for tools.echo:\n/text: must be string', retryable: false },
    });
    expect(await runtime.invoke({ name: 'tools.fetch' })).toEqual({
      ok: false,
      error: {
        code: 'CAPABILITY_DENIED',
        message:
          'tools.fetch needs net.outbound, which [runtime] capabilities does not grant; add it to [runtime] capabilities in runtime.toml to allow this tool',
        retryable: false,
      },
    });
    expect(await runtime.invoke({ name: 'off.hidden' })).toEqual({
      ok: false,
      error: {
        code: 'TOOL_UNAVAILABLE',
        message:
          'off.hidden is not offered: plugin off is disabled (off is not in profile minimal; add it to [plugins] allow) (NOT_IN_PROFILE)',
        retryable: false,
      },
    });
    expect(await runtime.invoke({ name: 'tools.ecko' })).toEqual({
      ok: false,
      error: { code: 'TOOL_NOT_FOUND', message: 'no tool is named tools.ecko; did you mean tools.echo?', retryable: false },
    });
  });
});
