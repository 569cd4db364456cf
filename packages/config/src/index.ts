export {
  RuntimeConfigSchema,
  PluginsConfigSchema,
  PluginEntrySchema,
  RuntimeSectionSchema,
  ToolPolicySchema,
} from './RuntimeConfigSchema.ts';
export type { RuntimeConfig, PluginsConfig, PluginEntry, RuntimeSection, ToolPolicy } from './RuntimeConfigSchema.ts';
