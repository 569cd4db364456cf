import { z } from 'zod';

/** `[plugins.entries.telegram.config]` (or `[runtime.tools.telegram]`). */
export const TelegramSettingsSchema = z
  .object({
    /** Chats whose messages reach the agent; every other chat gets no answer and a log line naming its id. Default: none. */
    allowed_chat_ids: z.array(z.number().int()).max(10_000).default([]),
    /** The Bot API server; point it at a local one (telegram-bot-api, or a test server). */
    api_root: z
      .string()
      .max(2048)
      .regex(/^https?:\/\/[^\s/?#]+\S*$/, 'must be an http:// or https:// URL')
      .default('https://api.telegram.org'),
    /** Long-polling timeout of each getUpdates, in seconds. */
    poll_timeout_seconds: z.number().int().min(0).max(50).default(30),
    /** Longest wait for one Bot API answer (getMe, sendMessage…), in seconds; getUpdates gets this on top of its poll timeout. */
    api_timeout_seconds: z.number().int().min(1).max(300).default(15),
    /** Longest message text handed to the agent, in characters (code points: an emoji is one); a longer one gets a short reply asking for less. */
    max_message_chars: z.number().int().min(1).max(1_000_000).default(16_000),
    /** Sent when a turn fails; the details go to the log, never to the chat. */
    apology: z.string().min(1).max(1000).default('Sorry, something went wrong and I could not answer. Please try again in a moment.'),
  })
  .strict();

/** The telegram plugin's resolved settings. */
export type TelegramSettings = z.infer<typeof TelegramSettingsSchema>;
