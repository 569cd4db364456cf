import { definePlugin } from '@trellis/sdk';
import { createFetchTool, fetchTool, FetchInputSchema } from './fetchTool.ts';
import { WebSettingsSchema } from './WebSettingsSchema.ts';
import type { WebSettings } from './WebSettingsSchema.ts';

/** The core-web plugin: `core-web.fetch`, refusing private and loopback targets unless allowed. */
export const plugin = definePlugin<WebSettings>({
  manifest: { id: 'core-web' },
  settings: { key: 'web', schema: WebSettingsSchema },
  tools: [fetchTool],
});

export { WebSettingsSchema, FetchInputSchema, createFetchTool, fetchTool };
export { classifyAddress } from './classifyAddress.ts';
export type { AddressClass } from './classifyAddress.ts';
export type { WebSettings };
export type { FetchInput, FetchResult, CreateFetchToolOptions } from './fetchTool.ts';
export type { ResolveHost } from './fetchUrl.ts';
