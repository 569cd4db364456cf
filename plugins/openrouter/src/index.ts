import { definePlugin, ERROR_CODES, ProviderError } from '@trellis/sdk';
import { createOpenRouterProvider } from './createOpenRouterProvider.ts';
import { OpenRouterSettingsSchema, type OpenRouterSettings } from './settings.ts';

/**
 * The openrouter plugin: a provider for OpenRouter or any OpenAI-compatible endpoint, through the
 * official `openai` client. Needs `OPENROUTER_API_KEY` (the registry marks it unavailable without).
 */
export const plugin = definePlugin<OpenRouterSettings>({
  manifest: { id: 'openrouter' },
  settings: { key: 'openrouter', schema: OpenRouterSettingsSchema },
  provider: {
    create(ctx) {
      const apiKey = ctx.env.OPENROUTER_API_KEY;
      if (apiKey === undefined || apiKey === '') {
        throw new ProviderError(
          ERROR_CODES.PROVIDER_UNAVAILABLE,
          'OPENROUTER_API_KEY is not set; set it to an OpenRouter key, or point [plugins.entries.openrouter.config] base_url at a local OpenAI-compatible server and set OPENROUTER_API_KEY to any value it accepts',
        );
      }
      return createOpenRouterProvider({ settings: OpenRouterSettingsSchema.parse(ctx.config ?? {}), apiKey });
    },
  },
});

export { createOpenRouterProvider } from './createOpenRouterProvider.ts';
export type { CreateOpenRouterProviderOptions } from './createOpenRouterProvider.ts';
export { OpenRouterSettingsSchema, OPENROUTER_BASE_URL } from './settings.ts';
export type { OpenRouterSettings } from './settings.ts';
