import { describe, expect, it } from 'vitest';
import { definePlugin, ToolError, type DynamicToolSpec, type HostServices, type ToolSource } from '@trellis/sdk';
import { type BundledPluginDescriptor } from '@trellis/sdk/internal';
import { PluginManifestSchema } from '@trellis/sdk/schema';
import { createBundledImplementation } from '../src/index.ts';

const host: HostServices = { plugins: () => [], explainPlugin: () => undefined, searchTools: () => [] };

/** A source whose tools are set by the test: the contract between a plugin and the runtime. */
function memorySource() {
  let tools: DynamicToolSpec[] = [{ name: 'srv.ping', description: 'Ping', inputSchema: { type: 'object' } }];
  const listeners = new Set<() => void>();
  const log: string[] = [];
  const source: ToolSource = {
    async start(options) {
      log.push(`start ${options?.mode}`);
    },
    list: () => tools,
    async call(tool, input, ctx) {
      log.push(`call ${tool} ${JSON.stringify(input)} ${ctx.tool}`);
      if (tool === 'srv.down') throw new ToolError('MCP_SERVER_UNAVAILABLE', 'mcp server srv is down');
      return { pong: true };
    },
    onChanged(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    problems: () => [{ code: 'MCP_SERVER_UNAVAILABLE', message: 'mcp server other failed to start' }],
    async close() {
      log.push('close');
    },
  };
  return {
    source,
    log,
    change(next: DynamicToolSpec[]) {
      tools = next;
      for (const listener of listeners) listener();
    },
  };
}

function descriptorFor(source: ToolSource): BundledPluginDescriptor {
  return {
    packageName: '@trellis/plugin-bridge',
    manifest: PluginManifestSchema.parse({ schema_version: 1, id: 'bridge', name: 'bridge', version: '1.0.0', kind: 'bridge' }),
    tools: [],
    dynamicTools: true,
    load: async () => definePlugin({ manifest: { id: 'bridge' }, tools: [], toolSource: () => source }) as never,
  };
}

describe('a bundled plugin with a tool source', () => {
  it('starts the source, lists its tools, routes calls to it, follows changes, and closes it', async () => {
    const memory = memorySource();
    const implementation = createBundledImplementation({
      descriptor: descriptorFor(memory.source),
      settings: {},
      workspace: { root: '/' },
      env: {},
      host,
      toolSourceMode: 'refresh',
    });
    await implementation.start();
    expect(memory.log).toEqual(['start refresh']);
    expect(implementation.discoveredTools?.()?.map((tool) => tool.name)).toEqual(['srv.ping']);
    expect(implementation.problems?.()).toEqual([{ code: 'MCP_SERVER_UNAVAILABLE', message: 'mcp server other failed to start' }]);

    const signal = new AbortController().signal;
    expect(
      await implementation.call({ tool: 'srv.ping', input: { n: 1 }, callId: 'c1', signal, deadlineAt: performance.now() + 1000 }),
    ).toEqual({ ok: true, value: { pong: true } });
    expect(await implementation.call({ tool: 'srv.down', input: {}, callId: 'c2', signal, deadlineAt: performance.now() + 1000 })).toEqual({
      ok: false,
      error: { code: 'MCP_SERVER_UNAVAILABLE', message: 'mcp server srv is down', retryable: false },
    });
    expect(memory.log).toContain('call srv.ping {"n":1} bridge.srv.ping');

    let changes = 0;
    const unsubscribe = implementation.onToolsChanged!(() => (changes += 1));
    memory.change([{ name: 'srv.pong', description: 'Pong', inputSchema: { type: 'object' } }]);
    expect(changes).toBe(1);
    expect(implementation.discoveredTools?.()?.map((tool) => tool.name)).toEqual(['srv.pong']);
    unsubscribe();
    memory.change([]);
    expect(changes).toBe(1);

    await implementation.dispose();
    expect(memory.log.at(-1)).toBe('close');
  });
});
