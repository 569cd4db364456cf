import { definePlugin } from '@trellis/sdk';
import { FsSettingsSchema } from './FsSettingsSchema.ts';
import type { FsSettings } from './FsSettingsSchema.ts';
import { editTool } from './editTool.ts';
import { globTool } from './globTool.ts';
import { listTool } from './listTool.ts';
import { readTool } from './readTool.ts';
import { searchTool } from './searchTool.ts';
import { statTool } from './statTool.ts';
import { writeTool } from './writeTool.ts';

/** The core-fs plugin: files confined to `[runtime.tools.fs] root`. */
export const plugin = definePlugin<FsSettings>({
  manifest: { id: 'core-fs' },
  settings: { key: 'fs', schema: FsSettingsSchema },
  tools: [readTool, writeTool, editTool, listTool, globTool, statTool, searchTool],
});

export { FsSettingsSchema } from './FsSettingsSchema.ts';
export type { FsSettings } from './FsSettingsSchema.ts';
export { confinePath, resolveFsRoot, checkPathText, MAX_PATH_BYTES, MAX_NAME_BYTES } from './confinePath.ts';
export type { ConfinedPath, FsRoot } from './confinePath.ts';
export { decodeText, encodeText } from './textCodec.ts';
export type { DecodedText, TextEncodingName } from './textCodec.ts';
export { readTool, ReadInputSchema } from './readTool.ts';
export type { ReadOutput } from './readTool.ts';
export { writeTool, WriteInputSchema } from './writeTool.ts';
export type { WriteOutput } from './writeTool.ts';
export { editTool, EditInputSchema } from './editTool.ts';
export type { EditOutput } from './editTool.ts';
export { listTool, ListInputSchema } from './listTool.ts';
export type { ListEntry, ListOutput } from './listTool.ts';
export { globTool, GlobInputSchema } from './globTool.ts';
export type { GlobOutput } from './globTool.ts';
export { statTool, StatInputSchema } from './statTool.ts';
export type { StatOutput } from './statTool.ts';
export { searchTool, SearchInputSchema } from './searchTool.ts';
export type { SearchMatch, SearchOutput } from './searchTool.ts';
