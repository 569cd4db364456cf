import { run, sequentialize, type RunnerHandle } from '@grammyjs/runner';
import { Bot, HttpError, type Context } from 'grammy';
import { ERROR_CODES, type Connector, type ConnectorHost, type Logger } from '@trellis/sdk';
import type { TelegramSettings } from './settings.ts';
import { splitMessage } from './splitMessage.ts';

/** Options of {@link createTelegramConnector}. */
export interface CreateTelegramConnectorOptions {
  readonly token: string;
  readonly settings: TelegramSettings;
  readonly logger: Logger;
}

/** How often the typing indicator is renewed (Telegram shows it for about 5 seconds). */
const TYPING_EVERY_MS = 4000;

/** Pauses between getMe attempts at start when the Bot API cannot be reached (then start fails). */
const START_RETRY_DELAYS_MS = [250, 1000, 2000];

/** A Telegram bot on long polling (grammY + @grammyjs/runner) that hands allowed chats' messages to the host. */
export function createTelegramConnector(options: CreateTelegramConnectorOptions): Connector {
  const { settings, logger } = options;
  const allowed = new Set(settings.allowed_chat_ids);
  let runner: RunnerHandle | undefined;
  let bot: Bot | undefined;
  // Getting an update from getUpdates does not confirm it to Telegram: only a later getUpdates with
  // a higher offset does. These say what this bot took and finished, so stop() can confirm exactly that.
  /** Updates the middleware is working on (waiting for their chat's turn included). */
  const inFlight = new Set<Promise<void>>();
  /** Update ids fetched and not yet through the middleware. */
  const unhandled = new Set<number>();
  let highestFetched: number | undefined;
  let polling = false;
  /** Aborts a start still waiting for the Bot API (stop() during start()). */
  let starting: AbortController | undefined;

  const answer = async (ctx: Context, host: ConnectorHost): Promise<void> => {
    const chatId = ctx.chat!.id;
    const text = ctx.message?.text ?? '';
    const command = /^\/(\w+)(?:@\w+)?(?:\s|$)/.exec(text)?.[1];
    if (command === 'reset') {
      host.reset(String(chatId));
      logger.info('history reset', { chat: chatId });
      await ctx.reply('History cleared.');
      return;
    }
    if (command === 'start') {
      await ctx.reply('Hello! Send me a message and I will answer. /reset clears our conversation.');
      return;
    }
    const typing = () =>
      void ctx
        .replyWithChatAction('typing')
        .catch((error: unknown) => logger.debug('typing indicator failed', { chat: chatId, error: String(error) }));
    typing();
    const timer = setInterval(typing, TYPING_EVERY_MS);
    const started = performance.now();
    let reply = '';
    let failure: { code: string; message: string } | undefined;
    let tools = 0;
    try {
      for await (const event of host.handle({ conversationId: String(chatId), senderId: String(ctx.from?.id ?? ''), text })) {
        if (event.type === 'tool_ended') tools += 1;
        else if (event.type === 'done') {
          reply = event.reply;
          failure = event.error;
        }
      }
    } finally {
      clearInterval(timer);
    }
    if (failure !== undefined) {
      logger.error('turn failed; sent an apology', { chat: chatId, code: failure.code, message: failure.message });
      await ctx.reply(settings.apology);
      return;
    }
    const parts = splitMessage(reply.trim() === '' ? '(no answer)' : reply);
    for (const part of parts) await ctx.reply(part);
    logger.info('answered', { chat: chatId, tools, parts: parts.length, durationMs: Math.round(performance.now() - started) });
  };

  return {
    async start(host) {
      unhandled.clear();
      highestFetched = undefined;
      const created = new Bot(options.token, { client: { apiRoot: settings.api_root, fetch: nativeFetch } });
      // getUpdates failures are retried by the runner; log them as structured lines instead of its console output.
      created.api.config.use(async (prev, method, payload, signal) => {
        try {
          const result = await prev(method, payload, signal);
          if (!result.ok) logger.warn('Bot API error', { method, code: result.error_code, description: result.description });
          else if (method === 'getUpdates' && polling) noteFetched(result.result as ReadonlyArray<{ readonly update_id: number }>);
          return result;
        } catch (error) {
          if (!(signal?.aborted ?? false)) logger.warn('Bot API request failed', { method, error: describeError(error) });
          throw error;
        }
      });
      created.use((ctx, next) => {
        const id = ctx.update.update_id;
        const passing: Promise<void> = next().finally(() => {
          unhandled.delete(id);
          inFlight.delete(passing);
        });
        inFlight.add(passing);
        return passing;
      });
      created.use(sequentialize((ctx: Context) => ctx.chat?.id.toString()));
      created.on('message:text', (ctx) => {
        const chatId = ctx.chat.id;
        if (!allowed.has(chatId)) {
          logger.info('message from a chat not in allowed_chat_ids; not answered', {
            chat: chatId,
            hint: `add ${chatId} to [plugins.entries.telegram.config] allowed_chat_ids to talk to it`,
          });
          return;
        }
        // Awaited so sequentialize keeps each chat's messages in order.
        return answer(ctx, host).catch(async (error: unknown) => {
          logger.error('could not answer; sent an apology', {
            chat: chatId,
            error: error instanceof Error ? error.message : String(error),
          });
          await ctx.reply(settings.apology).catch(() => undefined);
        });
      });
      created.catch((error) => logger.error('update handler failed', { error: error.message }));
      starting = new AbortController();
      try {
        // Not grammY's init(): it retries an unreachable server for ever, and a start (a restart
        // with a mistyped api_root) must end, so the caller can fall back or report it.
        created.botInfo = await getMe(created, starting.signal);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        throw Object.assign(
          new Error(`telegram: cannot start the bot at ${settings.api_root}: ${message}; check TELEGRAM_BOT_TOKEN and api_root`),
          { code: ERROR_CODES.CONNECTOR_FAILED },
        );
      }
      starting = undefined;
      bot = created;
      polling = true;
      runner = run(created, {
        runner: { silent: true, fetch: { timeout: settings.poll_timeout_seconds, allowed_updates: ['message'] } },
      });
      logger.info('polling', { bot: created.botInfo.username, api_root: settings.api_root, allowed_chats: allowed.size });
    },
    async stop() {
      starting?.abort();
      const handle = runner;
      runner = undefined;
      if (handle === undefined) return;
      if (handle.isRunning()) await handle.stop();
      polling = false;
      logger.info('stopped polling', { answering: inFlight.size });
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
      await confirmHandled();
    },
  };

  function noteFetched(updates: ReadonlyArray<{ readonly update_id: number }>): void {
    for (const update of updates) {
      unhandled.add(update.update_id);
      if (highestFetched === undefined || update.update_id > highestFetched) highestFetched = update.update_id;
    }
  }

  /**
   * Confirms to the Bot API every update this bot took and answered (what grammY's own `bot.stop()`
   * does), so a connector started after it — a restart with new settings, the next `trellis run` —
   * is not handed them again. An update fetched but never handled stays unconfirmed: the next one gets it.
   */
  async function confirmHandled(): Promise<void> {
    if (bot === undefined || highestFetched === undefined) return;
    const offset = unhandled.size === 0 ? highestFetched + 1 : Math.min(...unhandled);
    try {
      await bot.api.getUpdates({ offset, limit: 1, timeout: 0 });
    } catch (error) {
      logger.warn('could not confirm the answered updates to the Bot API; the next start may get them again', {
        offset,
        error: describeError(error),
      });
    }
  }
}

/** getMe, tried again a few times while the server cannot be reached; an answer (401 included) is final. */
async function getMe(bot: Bot, signal: AbortSignal): Promise<Bot['botInfo']> {
  for (let attempt = 0; ; attempt++) {
    try {
      // grammY types signals as its abort-controller polyfill's; a native one works the same (see nativeFetch).
      return await bot.api.getMe(signal as Parameters<Bot['api']['getMe']>[0]);
    } catch (error) {
      const delay = START_RETRY_DELAYS_MS[attempt];
      if (!(error instanceof HttpError) || delay === undefined || signal.aborted) throw error;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay);
        signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
      });
      if (signal.aborted) throw error;
    }
  }
}

/** An error's message with its cause (grammY's HttpError keeps the network error in `error`). */
function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const inner = (error as { error?: unknown }).error ?? error.cause;
  return inner instanceof Error ? `${error.message} (${inner.message})` : error.message;
}

/**
 * Node's own fetch for grammY, instead of its bundled node-fetch 2: node-fetch recognises abort
 * signals by class name, which minified builds rename, and then refuses every request. grammY and
 * the runner hand over signals of the abort-controller polyfill, so they are bridged to native ones.
 */
const nativeFetch = ((input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]) => {
  const given = init?.signal as
    { readonly aborted: boolean; addEventListener(type: 'abort', listener: () => void): void } | null | undefined;
  if (given === undefined || given === null || given instanceof AbortSignal) return fetch(input, init);
  const controller = new AbortController();
  if (given.aborted) controller.abort();
  else given.addEventListener('abort', () => controller.abort());
  const streamed = init?.body !== undefined && init.body !== null && typeof init.body !== 'string';
  return fetch(input, { ...init, signal: controller.signal, ...(streamed ? { duplex: 'half' } : {}) } as RequestInit);
}) as typeof fetch;
