import type { Tool } from '@modelcontextprotocol/server';
import type { McpToolEntry } from './McpToolTable.ts';

/** Options of `renderMcpTool`. */
export interface RenderMcpToolOptions {
  /** Plugins whose tools reach outside the host by nature (bridges): `openWorldHint: true`. */
  readonly openWorldPlugins?: ReadonlySet<string>;
  /**
   * `legacy` (2025-era clients): an output schema whose root is not an object is sent wrapped as
   * `{ result: <schema> }`, as the SDK wraps the matching structured result for that era.
   */
  readonly era: 'legacy' | 'modern';
}

/**
 * One offered tool as an MCP `Tool`. Annotations come from the contract: `readOnlyHint` is "no side
 * effects"; a side-effecting tool is marked `destructiveHint: true` (the contract does not say
 * whether a write only adds, so the spec's cautious default is stated); `idempotentHint` is the
 * contract's; `openWorldHint` is true for tools that need `net.outbound` and for bridged tools.
 */
export function renderMcpTool({ mcpName, descriptor }: McpToolEntry, options: RenderMcpToolOptions): Tool {
  const { contract } = descriptor;
  const openWorld = contract.capabilities.includes('net.outbound') || (options.openWorldPlugins?.has(descriptor.plugin) ?? false);
  const outputSchema = descriptor.outputSchema === undefined ? undefined : outputSchemaFor(descriptor.outputSchema, options.era);
  return {
    name: mcpName,
    title: descriptor.name,
    description: descriptor.description,
    inputSchema: descriptor.inputSchema as Tool['inputSchema'],
    ...(outputSchema !== undefined ? { outputSchema: outputSchema as Tool['outputSchema'] } : {}),
    annotations: {
      title: descriptor.name,
      readOnlyHint: !contract.sideEffects,
      ...(contract.sideEffects ? { destructiveHint: true } : {}),
      idempotentHint: contract.idempotent,
      openWorldHint: openWorld,
    },
  };
}

/** True when a JSON Schema's root describes only objects. */
export function isObjectRootSchema(schema: Readonly<Record<string, unknown>>): boolean {
  return schema.type === 'object';
}

function outputSchemaFor(schema: Readonly<Record<string, unknown>>, era: 'legacy' | 'modern'): Readonly<Record<string, unknown>> {
  if (era === 'modern' || isObjectRootSchema(schema)) return schema;
  return { type: 'object', properties: { result: schema }, required: ['result'] };
}
