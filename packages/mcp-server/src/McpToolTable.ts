import { hashJson, type ResourceCatalog, type ToolDescriptor } from '@trellis/catalog';

/** How Trellis tool names appear to MCP clients. */
export type McpToolNaming = 'qualified' | 'short';

/** MCP's tool-name rule (spec 2025-11-25, SEP-986); every name this table gives matches it. */
export const MCP_TOOL_NAME_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;

/** One offered tool as served: its MCP name and its descriptor. */
export interface McpToolEntry {
  readonly mcpName: string;
  readonly descriptor: ToolDescriptor;
}

/** The offered tools of one catalog, in a fixed order, with names both ways. */
export interface McpToolTable {
  readonly entries: readonly McpToolEntry[];
  /** The descriptor behind an MCP name; undefined when this table holds none. */
  resolve(mcpName: string): ToolDescriptor | undefined;
  /** Changes whenever the served list changes (names, schemas, descriptions, annotations' sources). */
  readonly fingerprint: string;
}

/**
 * Builds the served tool list from a catalog. Order: the catalog's own deterministic order
 * (snapshot order, then declaration order). Names:
 *
 * - `qualified` (default): the catalog's model-API name, `core-fs.read_file` → `core-fs__read_file`
 *   (plain names split on `__`, others hashed; see `toModelToolName`). Dots are allowed by MCP but
 *   refused by the model APIs most clients pass MCP names to, so they are not used.
 * - `short`: the tool's own name (`read_file`) when no other offered tool has the same own name and
 *   it matches the MCP rule; the qualified name otherwise. For clients that already prefix the
 *   server's name, and for fixtures that call fixed names.
 *
 * Either way every MCP name maps back to exactly one Trellis name through `resolve`.
 */
export function createMcpToolTable(catalog: ResourceCatalog, naming: McpToolNaming = 'qualified'): McpToolTable {
  const offered = catalog.offered();
  const ownCounts = new Map<string, number>();
  if (naming === 'short') for (const d of offered) ownCounts.set(d.tool, (ownCounts.get(d.tool) ?? 0) + 1);
  const entries: McpToolEntry[] = [];
  const byName = new Map<string, ToolDescriptor>();
  const taken = new Set<string>();
  // Qualified names first, so a short name can never take one a qualified tool needs.
  const qualified = offered.map((d) => catalog.toModelToolName(d.name) ?? d.name);
  for (const name of qualified) taken.add(name);
  offered.forEach((descriptor, index) => {
    let mcpName = qualified[index]!;
    if (
      naming === 'short' &&
      ownCounts.get(descriptor.tool) === 1 &&
      MCP_TOOL_NAME_PATTERN.test(descriptor.tool) &&
      !taken.has(descriptor.tool)
    ) {
      mcpName = descriptor.tool;
      taken.add(mcpName);
    }
    entries.push({ mcpName, descriptor });
    byName.set(mcpName, descriptor);
  });
  // Everything `renderMcpTool` reads from a descriptor, so that any change a client could see in
  // `tools/list` (a description reworded at the same length, an output schema alone) changes it.
  const fingerprint = entries
    .map(({ mcpName, descriptor }) =>
      [
        mcpName,
        descriptor.name,
        descriptor.plugin,
        descriptor.schemaHash,
        descriptor.outputSchema === undefined ? '' : hashJson(descriptor.outputSchema),
        descriptor.description,
        JSON.stringify(descriptor.contract),
      ].join('\u0000'),
    )
    .join('\u0001');
  return {
    entries,
    resolve: (mcpName) => byName.get(mcpName),
    fingerprint,
  };
}
