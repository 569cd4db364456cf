import { definePlugin, ERROR_CODES } from '@trellis/sdk';
import { createTelegramConnector } from './createTelegramConnector.ts';
import { TelegramSettingsSchema, type TelegramSettings } from './settings.ts';

/**
 * The telegram plugin: a connector that answers Telegram chats through the host's agent loop.
 * Needs `TELEGRAM_BOT_TOKEN` (the registry marks it unavailable without).
 */
export const plugin = definePlugin<TelegramSettings>({
  manifest: { id: 'telegram' },
  settings: { key: 'telegram', schema: TelegramSettingsSchema },
  connector: {
    create(ctx) {
      const token = ctx.env.TELEGRAM_BOT_TOKEN;
      if (token === undefined || token === '') {
        throw Object.assign(
          new Error('TELEGRAM_BOT_TOKEN is not set; create a bot with @BotFather and set TELEGRAM_BOT_TOKEN to its token'),
          {
            code: ERROR_CODES.CONNECTOR_FAILED,
          },
        );
      }
      return createTelegramConnector({ token, settings: TelegramSettingsSchema.parse(ctx.config ?? {}), logger: ctx.logger });
    },
  },
});

export { createTelegramConnector } from './createTelegramConnector.ts';
export type { CreateTelegramConnectorOptions } from './createTelegramConnector.ts';
export { splitMessage, TELEGRAM_MESSAGE_LIMIT } from './splitMessage.ts';
export { TelegramSettingsSchema } from './settings.ts';
export type { TelegramSettings } from './settings.ts';
