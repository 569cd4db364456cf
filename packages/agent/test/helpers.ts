import { createResourceCatalog, type ResourceCatalog } from '@trellis/catalog';
import { RuntimeConfigSchema } from '@trellis/config';
import { createBundledImplementation, createToolRuntime, type ToolRuntime } from '@trellis/runtime';
import { definePlugin, resolveContract, type Provider, type ProviderEvent, type ProviderRequest, type ToolDefinition } from '@trellis/sdk';
import { type BundledPluginDescriptor } from '@trellis/sdk/internal';
import { PluginManifestSchema, toolJsonSchema } from '@trellis/sdk/schema';

/** A catalog and runtime over one in-process plugin `t` with the given tools (real ToolRuntime, real validation). */
export function toolHost(
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  tools: ReadonlyArray<ToolDefinition<any, any>>,
  pluginId = 't',
): { catalog: ResourceCatalog; runtime: ToolRuntime } {
  const manifest = PluginManifestSchema.parse({ schema_version: 1, id: pluginId, name: pluginId, version: '1.0.0', kind: 'toolset' });
  const plugin = definePlugin({ manifest: { id: pluginId }, tools });
  const descriptor: BundledPluginDescriptor = {
    packageName: `@test/${pluginId}`,
    manifest,
    tools: tools.map((t) => ({
      name: t.name,
      description: t.description,
      inputSchema: toolJsonSchema(t.input),
      tags: [],
      examples: [],
      contract: resolveContract(t.contract),
    })),
    load: async () => plugin,
  };
  const config = RuntimeConfigSchema.parse({});
  const catalog = createResourceCatalog({
    snapshot: { plugins: [{ id: pluginId, state: 'enabled', bundled: true, reasons: [], manifest }] },
    bundled: [descriptor],
    config,
  });
  const host = { plugins: () => [], explainPlugin: () => undefined, searchTools: () => [] };
  const impl = createBundledImplementation({ descriptor, settings: {}, workspace: { root: process.cwd() }, env: {}, host });
  const runtime = createToolRuntime({ catalog, implementations: new Map([[pluginId, impl]]), config });
  return { catalog, runtime };
}

/** One scripted model answer: text, tool calls, or a thrown error; a function sees the request. */
export type Scripted = { text?: string[]; calls?: Array<{ name: string; args: unknown; id?: string }>; error?: Error; hang?: boolean };

/**
 * A provider that answers from a script, recording every request. The model is the one thing a
 * test cannot reach, so it is scripted here; the openrouter plugin's own tests cover the wire.
 */
export function scriptedProvider(
  script: Array<Scripted | ((request: ProviderRequest) => Scripted)>,
): Provider & { requests: ProviderRequest[] } {
  const requests: ProviderRequest[] = [];
  let n = 0;
  return {
    model: 'scripted/model',
    requests,
    async *stream(request): AsyncGenerator<ProviderEvent> {
      requests.push({ ...request, messages: structuredClone([...request.messages]) });
      const entry = script[n++];
      if (entry === undefined) throw new Error(`scripted provider: no answer left for request ${n}`);
      const answer = typeof entry === 'function' ? entry(request) : entry;
      for (const delta of answer.text ?? []) yield { type: 'text', delta };
      if (answer.hang) {
        await new Promise<void>((_, reject) =>
          request.signal.addEventListener(
            'abort',
            () => reject(Object.assign(new Error('aborted'), { name: 'ProviderError', code: 'ABORTED' })),
            { once: true },
          ),
        );
      }
      if (answer.error) throw answer.error;
      for (const [i, call] of (answer.calls ?? []).entries()) {
        yield {
          type: 'tool_call',
          call: {
            id: call.id ?? `c${n}_${i}`,
            name: call.name,
            arguments: typeof call.args === 'string' ? call.args : JSON.stringify(call.args),
          },
        };
      }
      yield { type: 'usage', usage: { inputTokens: 10, outputTokens: 2, totalTokens: 12, cost: 0.001 } };
      yield { type: 'finish', reason: (answer.calls ?? []).length > 0 ? 'tool_calls' : 'stop' };
    },
  };
}
