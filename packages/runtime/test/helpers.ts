import { RuntimeConfigSchema, type RuntimeConfig } from '@trellis/config';
import { failureFromThrown } from '../src/outcomeFromThrown.ts';
import { resolveContract, type ToolContract, type ToolOutcome } from '@trellis/sdk';
import type { ImplementationCall, ImplementationOutcome, PluginImplementation } from '../src/PluginImplementation.ts';
import type { RuntimeCatalog, RuntimeToolDescriptor, RuntimeToolLookup } from '../src/RuntimeCatalog.ts';

/** A runtime.toml with `[runtime]` patched. */
export function runtimeConfig(runtime: Record<string, unknown> = {}): RuntimeConfig {
  return RuntimeConfigSchema.parse({ runtime });
}

/** A descriptor for `<plugin>.<tool>`. */
export function descriptor(
  name: string,
  options: { inputSchema?: Record<string, unknown>; contract?: Partial<ToolContract> } = {},
): RuntimeToolDescriptor {
  const [plugin = '', tool = ''] = name.split(/\.(.*)/s);
  return {
    name,
    plugin,
    tool,
    inputSchema: options.inputSchema ?? { type: 'object' },
    contract: resolveContract(options.contract),
  };
}

/** A catalog over fixed descriptors; `unavailable` maps names to a reason. */
export function staticCatalog(
  descriptors: readonly RuntimeToolDescriptor[],
  unavailable: Record<string, { code: string; message: string }> = {},
): RuntimeCatalog {
  const byName = new Map(descriptors.map((d) => [d.name, d]));
  return {
    lookup(name): RuntimeToolLookup {
      const found = byName.get(name);
      const reason = unavailable[name];
      if (found !== undefined && reason === undefined) return { status: 'offered', descriptor: found };
      if (reason !== undefined) return { status: 'unavailable', descriptor: found, reason };
      const nearest = [...byName.keys()].find((known) => known.split('.')[1] === name.split('.')[1]);
      return nearest === undefined ? { status: 'not_found' } : { status: 'not_found', nearest };
    },
  };
}

type Handler = (input: unknown, call: ImplementationCall) => unknown;

/**
 * An implementation whose tools are plain functions: what they return is the value, what they
 * throw becomes a failure, as a real implementation would do. Counts dispatches per tool.
 */
export function fakeImplementation(
  pluginId: string,
  tools: Record<string, Handler>,
  extra: {
    canonicalize?: Record<string, (input: unknown) => { input: unknown; summary?: Record<string, unknown> }>;
    outcomes?: Record<string, (input: unknown, call: ImplementationCall) => ImplementationOutcome | Promise<ImplementationOutcome>>;
  } = {},
): PluginImplementation & { dispatches: Record<string, number>; disposed: number } {
  const dispatches: Record<string, number> = {};
  const impl = {
    pluginId,
    dispatches,
    disposed: 0,
    async start() {},
    canonicalizes(tool: string) {
      return extra.canonicalize?.[tool] !== undefined;
    },
    async canonicalize(tool: string, input: unknown) {
      const hook = extra.canonicalize?.[tool];
      return hook === undefined ? { input } : hook(input);
    },
    async call(call: ImplementationCall): Promise<ImplementationOutcome> {
      dispatches[call.tool] = (dispatches[call.tool] ?? 0) + 1;
      const direct = extra.outcomes?.[call.tool];
      if (direct !== undefined) return direct(call.input, call);
      const handler = tools[call.tool];
      if (handler === undefined) return { ok: false, error: { code: 'TOOL_NOT_FOUND', message: 'no such tool', retryable: false } };
      try {
        return { ok: true, value: await handler(call.input, call) } as ToolOutcome;
      } catch (thrown) {
        return { ok: false, error: failureFromThrown(thrown, `${pluginId}.${call.tool}`) };
      }
    },
    state: () => 'active' as const,
    async dispose() {
      impl.disposed += 1;
    },
  };
  return impl;
}
