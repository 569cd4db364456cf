import type { ResourceCatalog, ToolDescriptor } from '@trellis/catalog';
import { compileToolGlob } from '@trellis/sdk/internal';

/** When the offered tools exceed either limit, the model sees a small set plus `find_tools`. */
export interface ToolBudget {
  /** Most tools shown to the model at once. Default 40. */
  readonly maxTools: number;
  /** Most bytes of rendered tool JSON (names, descriptions, schemas) shown at once. Default 48 KiB. */
  readonly maxSchemaBytes: number;
}

/** The default budget: well under what models handle well, and what hosts such as VS Code cap at. */
export const DEFAULT_TOOL_BUDGET: ToolBudget = { maxTools: 40, maxSchemaBytes: 48 * 1024 };

/** The model-API name of the search tool the agent adds for large catalogs. */
export const FIND_TOOLS_NAME = 'find_tools';

/** Tools shown from the start in large-catalog mode, when they fit. */
export const DEFAULT_PINNED_TOOLS: readonly string[] = ['builtin-tools.*'];

/** Bytes of a descriptor as the model sees it (the OpenAI rendering). */
export function renderedBytes(descriptor: ToolDescriptor): number {
  return descriptor.name.length + descriptor.description.length + JSON.stringify(descriptor.inputSchema).length + 64;
}

/** True when every offered tool fits in the budget, so the model simply sees them all. */
export function fitsBudget(descriptors: readonly ToolDescriptor[], budget: ToolBudget): boolean {
  if (descriptors.length > budget.maxTools) return false;
  let bytes = 0;
  for (const d of descriptors) {
    bytes += renderedBytes(d);
    if (bytes > budget.maxSchemaBytes) return false;
  }
  return true;
}

/**
 * The tools shown from the start in large-catalog mode: offered tools matching `pinned`, in catalog
 * order, while they fit in half the budget (the other half is for tools the model loads).
 */
export function pinnedDescriptors(catalog: ResourceCatalog, pinned: readonly string[], budget: ToolBudget): ToolDescriptor[] {
  const matchers = pinned.map(compileToolGlob);
  const out: ToolDescriptor[] = [];
  let bytes = 0;
  for (const d of catalog.offered()) {
    if (!matchers.some((m) => m(d.name))) continue;
    const size = renderedBytes(d);
    if (out.length + 1 > Math.floor(budget.maxTools / 2) || bytes + size > budget.maxSchemaBytes / 2) break;
    out.push(d);
    bytes += size;
  }
  return out;
}
