export { createResourceCatalog, createResourceCatalogInSteps, createCatalogBuildCache } from './ResourceCatalog.ts';
export type { ResourceCatalog, CreateResourceCatalogOptions, CatalogBuildCache, ToolAvailability, ToolLookup } from './ResourceCatalog.ts';
export type {
  CatalogReason,
  CatalogPluginView,
  CatalogSnapshotView,
  CatalogBundledView,
  CatalogConfigView,
} from './CatalogSnapshotView.ts';
export { createToolDescriptor, canonicalJson, hashJson } from './ToolDescriptor.ts';
export type { ToolDescriptor, ToolDescriptorFields, ToolSource } from './ToolDescriptor.ts';
export type { ToolOverride, ToolOverrides, ParseToolOverridesResult, ParseToolOverridesOptions } from './parseToolOverrides.ts';
export { renderTools } from './renderTools.ts';
export type { ToolRenderFormat, RenderedTool, RenderToolsOptions, OpenAiTool, AnthropicTool, McpTool } from './renderTools.ts';
export {
  MODEL_TOOL_NAME_PATTERN,
  toModelToolName,
  fromModelToolName,
  decodePlainModelToolName,
  createModelNameTable,
} from './toModelToolName.ts';
export type { ModelNameTable } from './toModelToolName.ts';
export { nearestName } from './nearestName.ts';
export { splitName } from './searchIndex.ts';
export type { ToolSearchHit } from './searchIndex.ts';
