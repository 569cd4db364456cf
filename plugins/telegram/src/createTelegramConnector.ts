import { setTimeout as waitFor } from 'node:timers/promises';
import { run, sequentialize, type RunnerHandle } from '@grammyjs/runner';
import { Bot, HttpError, type Context } from 'grammy';
import { ERROR_CODES, type Connector, type ConnectorHost, type Logger } from '@trellis/sdk';
import { createTokenRedactor, redactingLogger } from './createTokenRedactor.ts';
import type { TelegramSettings } from './settings.ts';
import { splitMessage } from './splitMessage.ts';

/** Options of {@link createTelegramConnector}. */
export interface CreateTelegramConnectorOptions {
  /** The bot token; blanked out of every line the connector logs and of the error of a failed start. */
  readonly token: string;
  readonly settings: TelegramSettings;
  readonly logger: Logger;
}

/** How often the typing indicator is renewed (Telegram shows it for about 5 seconds). */
const TYPING_EVERY_MS = 4000;

/** Pauses between getMe attempts at start when the Bot API cannot be reached (then start fails). */
const START_RETRY_DELAYS_MS = [250, 1000, 2000];

/** Times one request waits out a 429 (`retry_after`) before it fails, and the longest such wait honoured. */
const RATE_LIMIT_RETRIES = 3;
const RATE_LIMIT_MAX_WAIT_SECONDS = 60;

/** Pause after a failed or malformed getUpdates, doubling up to the cap, so a broken server is not polled in a loop. */
const POLL_BACKOFF_FIRST_MS = 250;
const POLL_BACKOFF_MAX_MS = 30_000;

/** Update ids remembered to recognise one delivered again: far more than a poll brings. */
const REMEMBERED_UPDATES = 10_000;

/**
 * The longest wait for the answer to the confirmation at stop (at most `api_timeout_seconds`): a best
 * effort, one short request a healthy server answers at once, so a hung one does not hold up the stop.
 */
const CONFIRM_MS = 2000;

/** How long a stop already forced (a second `stop()`) still tries to confirm the updates that were handled. */
const FORCED_CONFIRM_MS = 1000;

/** grammY types abort signals as its polyfill's; native ones work the same (see nativeFetch). */
type GrammySignal = Parameters<Bot['api']['getMe']>[0];

/** What both native and polyfill abort signals offer. */
interface SignalLike {
  readonly aborted: boolean;
  addEventListener(type: 'abort', listener: () => void): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/** An update between getUpdates and the end of its handling. */
interface InFlightUpdate {
  readonly chat: number | undefined;
  /** `waiting`: behind its chat's previous message; `answering`: its turn runs; `sending`: the reply goes out. */
  stage: 'waiting' | 'answering' | 'sending';
  done?: Promise<void>;
}

/**
 * A Telegram bot on long polling (grammY + @grammyjs/runner) that hands allowed chats' messages to
 * the host. `stop()` stops polling and resolves once the messages already taken are answered; a
 * second `stop()` while that is under way stops now: Bot API requests in flight are aborted, turns
 * still running are cancelled, and what was abandoned is logged.
 */
export function createTelegramConnector(options: CreateTelegramConnectorOptions): Connector {
  const { settings } = options;
  // Every line this connector logs, and the error of a failed start, go without the token.
  const redact = createTokenRedactor(options.token);
  const logger = redactingLogger(options.logger, redact);
  const allowed = new Set(settings.allowed_chat_ids);
  const apiTimeoutMs = settings.api_timeout_seconds * 1000;
  let runner: RunnerHandle | undefined;
  let bot: Bot | undefined;
  // Getting an update from getUpdates does not confirm it to Telegram: only a later getUpdates with
  // a higher offset does. These say what this bot took and finished, so stop() can confirm exactly that.
  const inFlight = new Map<number, InFlightUpdate>();
  /** Update ids fetched and not yet through the middleware. */
  const unhandled = new Set<number>();
  /** Update ids taken (oldest first, bounded): the same update delivered again is not answered twice. */
  const taken = new Set<number>();
  let highestFetched: number | undefined;
  let polling = false;
  let pollBackoffMs = 0;
  /** Aborts a start still waiting for the Bot API (stop() during start()). */
  let starting: AbortController | undefined;
  /** The first stop(); set, it means no new turn starts. */
  let stopping: Promise<void> | undefined;
  /** Aborted by a second stop(): every Bot API request but getUpdates, and every running turn. */
  let abandoning = new AbortController();

  const answer = async (ctx: Context, host: ConnectorHost, update: InFlightUpdate | undefined): Promise<void> => {
    const chatId = ctx.chat!.id;
    const text = ctx.message?.text ?? '';
    if (update !== undefined) update.stage = 'answering';
    const chars = countCharacters(text);
    if (chars > settings.max_message_chars) {
      logger.info('message too long; not handed to the agent', { chat: chatId, chars, limit: settings.max_message_chars });
      await ctx.reply(
        `That message is too long for me: ${chars} characters, and I read at most ${settings.max_message_chars}. Please send a shorter one.`,
      );
      return;
    }
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
      const message = { conversationId: String(chatId), senderId: String(ctx.from?.id ?? ''), text };
      for await (const event of host.handle(message, { signal: abandoning.signal })) {
        if (event.type === 'tool_ended') tools += 1;
        else if (event.type === 'done') {
          reply = event.reply;
          failure = event.error;
        }
      }
    } finally {
      clearInterval(timer);
    }
    if (update !== undefined) update.stage = 'sending';
    if (failure !== undefined) {
      if (abandoning.signal.aborted) return;
      logger.error('turn failed; sent an apology', { chat: chatId, code: failure.code, message: failure.message });
      await ctx.reply(settings.apology);
      return;
    }
    // A 429 in the middle is waited out by the API guard, so the rest follow in order.
    const parts = splitMessage(reply.trim() === '' ? '(no answer)' : reply);
    for (const part of parts) await ctx.reply(part);
    logger.info('answered', { chat: chatId, tools, parts: parts.length, durationMs: Math.round(performance.now() - started) });
  };

  /** Pauses a failed poll (the runner's own retry is short); returns early when polling stops. */
  const pauseAfterFailedPoll = async (signal: SignalLike | undefined): Promise<void> => {
    pollBackoffMs = Math.min(POLL_BACKOFF_MAX_MS, pollBackoffMs === 0 ? POLL_BACKOFF_FIRST_MS : pollBackoffMs * 2);
    await sleep(pollBackoffMs, [signal]).catch(() => undefined);
  };

  return {
    async start(host) {
      inFlight.clear();
      unhandled.clear();
      taken.clear();
      highestFetched = undefined;
      pollBackoffMs = 0;
      stopping = undefined;
      abandoning = new AbortController();
      const created = new Bot(options.token, {
        client: {
          apiRoot: settings.api_root,
          fetch: nativeFetch,
          // grammY's own bound (500 s by default) on every request, a long poll included; the guard below is tighter for the rest.
          timeoutSeconds: settings.poll_timeout_seconds + settings.api_timeout_seconds,
        },
      });
      // The API guard: a deadline on each request, 429s waited out, broken polls paced, and
      // structured log lines instead of the runner's console output.
      created.api.config.use(async (prev, method, payload, signal) => {
        const poll = method === 'getUpdates' && polling;
        // getUpdates ends with the runner (the last confirmation has its own limit); the rest also with a forced stop.
        const callers: Array<SignalLike | undefined> = [signal, method === 'getUpdates' ? undefined : abandoning.signal];
        const limitMs = method === 'getUpdates' ? undefined : apiTimeoutMs;
        for (let attempt = 1; ; attempt++) {
          const link = linkSignals(callers, limitMs);
          let result;
          try {
            result = await prev(method, payload, link.signal as GrammySignal);
          } catch (error) {
            const failure = link.timedOut()
              ? Object.assign(new Error(`the Bot API did not answer ${method} within ${limitMs! / 1000} s`), { code: ERROR_CODES.TIMEOUT })
              : error;
            if (!callers.some((s) => s?.aborted)) {
              logger.warn('Bot API request failed', { method, error: describeError(failure) });
              if (poll) await pauseAfterFailedPoll(signal);
            }
            throw failure;
          } finally {
            link.dispose();
          }
          if (result.ok) {
            if (!poll) return result;
            if (!isUpdateList(result.result)) {
              logger.warn('Bot API answered getUpdates with something that is not a list of updates; polling again after a pause', {
                got: Array.isArray(result.result) ? 'a list with an entry that is not an update' : typeof result.result,
              });
              await pauseAfterFailedPoll(signal);
              throw new Error('getUpdates: the Bot API answer is not a list of updates');
            }
            pollBackoffMs = 0;
            noteFetched(result.result);
            return result;
          }
          const wait = result.parameters?.retry_after;
          if (
            result.error_code === 429 &&
            method !== 'sendChatAction' &&
            typeof wait === 'number' &&
            wait <= RATE_LIMIT_MAX_WAIT_SECONDS &&
            attempt <= RATE_LIMIT_RETRIES
          ) {
            logger.warn('Bot API rate limit: waiting before trying again', { method, retry_after: wait, attempt });
            await sleep(wait * 1000, callers);
            continue;
          }
          logger.warn('Bot API error', { method, code: result.error_code, description: result.description });
          if (poll) await pauseAfterFailedPoll(signal);
          return result;
        }
      });
      created.use((ctx, next) => {
        const id = ctx.update.update_id;
        if (taken.has(id)) {
          logger.info('update delivered again; it was already taken, so it is not answered twice', { update_id: id });
          if (!inFlight.has(id)) unhandled.delete(id);
          return;
        }
        taken.add(id);
        if (taken.size > REMEMBERED_UPDATES) taken.delete(taken.values().next().value as number);
        const update: InFlightUpdate = { chat: ctx.chat?.id, stage: 'waiting' };
        inFlight.set(id, update);
        update.done = next().finally(() => {
          inFlight.delete(id);
          unhandled.delete(id);
        });
        return update.done;
      });
      created.use(sequentialize((ctx: Context) => ctx.chat?.id.toString()));
      created.on('message:text', (ctx) => {
        const chatId = ctx.chat.id;
        const id = ctx.update.update_id;
        if (!allowed.has(chatId)) {
          logger.info('message from a chat not in allowed_chat_ids; not answered', {
            chat: chatId,
            hint: `add ${chatId} to [plugins.entries.telegram.config] allowed_chat_ids to talk to it`,
          });
          return;
        }
        if (stopping !== undefined) {
          // No turn starts once stopping. Telegram cannot hand this message out again (the runner's
          // next poll, sent as soon as it arrived, confirmed it), so the chat is asked to send it again.
          logger.warn('not answered: the bot is stopping; sent the apology so the chat asks again', { chat: chatId, update_id: id });
          return ctx.reply(settings.apology).then(
            () => undefined,
            (error: unknown) => logger.warn('could not send the apology', { chat: chatId, update_id: id, error: describeError(error) }),
          );
        }
        // Awaited so sequentialize keeps each chat's messages in order.
        return answer(ctx, host, inFlight.get(id)).catch(async (error: unknown) => {
          if (abandoning.signal.aborted) return;
          logger.error('could not answer; sent an apology', {
            chat: chatId,
            error: error instanceof Error ? error.message : String(error),
          });
          await ctx.reply(settings.apology).catch(() => undefined);
        });
      });
      created.catch((error) => logger.error('update handler failed', { error: error.message }));
      const start = new AbortController();
      starting = start;
      try {
        // Not grammY's init(): it retries an unreachable server for ever, and a start (a restart
        // with a mistyped api_root) must end, so the caller can fall back or report it.
        created.botInfo = await getMe(created, start.signal);
        if (start.signal.aborted) throw new Error('stopped while starting');
      } catch (error) {
        const message = start.signal.aborted ? 'stopped while starting' : error instanceof Error ? error.message : String(error);
        throw Object.assign(
          new Error(`telegram: cannot start the bot at ${settings.api_root}: ${redact(message)}; check TELEGRAM_BOT_TOKEN and api_root`),
          { code: ERROR_CODES.CONNECTOR_FAILED },
        );
      } finally {
        starting = undefined;
      }
      bot = created;
      polling = true;
      runner = run(created, {
        runner: {
          silent: true,
          // The guard above paces failed polls (doubling, capped); the runner's own doubling has no cap.
          retryInterval: 100,
          fetch: { timeout: settings.poll_timeout_seconds, allowed_updates: ['message'] },
        },
      });
      // The runner gives up on answers a retry cannot mend (401: the token was revoked; 409: another
      // program polls this bot) by rejecting its task: said here, never an unhandled rejection that
      // would end the host.
      void runner.task()?.catch((error: unknown) => {
        polling = false;
        logger.error(`polling stopped: ${pollingStoppedHint(error)}; the bot answers nothing until trellis run is restarted`, {
          error: describeError(error),
        });
      });
      logger.info('polling', { bot: created.botInfo.username, api_root: settings.api_root, allowed_chats: allowed.size });
    },
    stop() {
      if (stopping !== undefined) {
        abandon();
        return stopping;
      }
      stopping = stopPolling();
      return stopping;
    },
  };

  async function stopPolling(): Promise<void> {
    starting?.abort();
    const handle = runner;
    runner = undefined;
    if (handle === undefined) return;
    if (handle.isRunning()) await handle.stop();
    polling = false;
    logger.info('stopped polling', { answering: inFlight.size });
    while (inFlight.size > 0) await Promise.allSettled([...inFlight.values()].map((update) => update.done));
    await confirmHandled();
  }

  /** The second stop(): aborts what is still in flight and says what that was. */
  function abandon(): void {
    if (abandoning.signal.aborted) return;
    const left = [...inFlight].map(([id, update]) => ({ update_id: id, chat: update.chat, stage: update.stage }));
    if (left.length > 0) {
      logger.warn(
        'stopping now: abandoned the messages in flight (waiting: never answered; answering: turn cancelled; sending: reply cut short)',
        {
          abandoned: left,
        },
      );
    }
    abandoning.abort();
  }

  function noteFetched(updates: ReadonlyArray<{ readonly update_id: number }>): void {
    for (const update of updates) {
      unhandled.add(update.update_id);
      if (highestFetched === undefined || update.update_id > highestFetched) highestFetched = update.update_id;
    }
  }

  /**
   * Confirms to the Bot API every update this bot took and handled (what grammY's own `bot.stop()`
   * does), so a connector started after it — a restart with new settings, the next `trellis run` —
   * is not handed them again. An update fetched but never handled stays unconfirmed: the next one gets it.
   */
  async function confirmHandled(): Promise<void> {
    if (bot === undefined || highestFetched === undefined) return;
    const offset = unhandled.size === 0 ? highestFetched + 1 : Math.min(...unhandled);
    // Ended by a second stop() too, unless that came first: then it gets a moment of its own.
    const forced = abandoning.signal.aborted;
    const limitMs = forced ? FORCED_CONFIRM_MS : Math.min(CONFIRM_MS, apiTimeoutMs);
    const link = linkSignals(forced ? [] : [abandoning.signal], limitMs);
    try {
      await bot.api.getUpdates({ offset, limit: 1, timeout: 0 }, link.signal as GrammySignal);
    } catch (error) {
      logger.warn('could not confirm the answered updates to the Bot API; the next start may get them again', {
        offset,
        error: link.timedOut() ? `the Bot API did not answer getUpdates within ${limitMs / 1000} s` : describeError(error),
      });
    } finally {
      link.dispose();
    }
  }
}

/** getMe, tried again a few times while the server cannot be reached; an answer (401 included) or a timeout is final. */
async function getMe(bot: Bot, signal: AbortSignal): Promise<Bot['botInfo']> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await bot.api.getMe(signal as GrammySignal);
    } catch (error) {
      const delay = START_RETRY_DELAYS_MS[attempt];
      if (!(error instanceof HttpError) || delay === undefined || signal.aborted) throw error;
      await sleep(delay, [signal]).catch(() => undefined);
      if (signal.aborted) throw error;
    }
  }
}

/** Whether a getUpdates result is what the runner can work with: a list of objects with an integer update_id. */
function isUpdateList(result: unknown): result is Array<{ readonly update_id: number }> {
  return (
    Array.isArray(result) &&
    result.every((u: unknown) => typeof u === 'object' && u !== null && Number.isSafeInteger((u as { update_id?: unknown }).update_id))
  );
}

/** One native signal aborted by any of `signals` (native or grammY's polyfill), or after `limitMs`. */
function linkSignals(
  signals: ReadonlyArray<SignalLike | undefined>,
  limitMs?: number,
): { signal: AbortSignal; timedOut(): boolean; dispose(): void } {
  const controller = new AbortController();
  const abort = () => controller.abort();
  const linked: SignalLike[] = [];
  for (const signal of signals) {
    if (signal === undefined) continue;
    if (signal.aborted) controller.abort();
    signal.addEventListener('abort', abort);
    linked.push(signal);
  }
  let timedOut = false;
  const timer =
    limitMs === undefined
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          controller.abort();
        }, limitMs);
  return {
    signal: controller.signal,
    timedOut: () => timedOut,
    dispose() {
      clearTimeout(timer);
      for (const signal of linked) signal.removeEventListener('abort', abort);
    },
  };
}

/** What to do about the error that stopped the runner's polling. */
function pollingStoppedHint(error: unknown): string {
  const code = (error as { error_code?: unknown }).error_code;
  if (code === 401) return 'the Bot API refused the token (401); check TELEGRAM_BOT_TOKEN';
  if (code === 409) return 'another program polls this bot (409; Telegram allows one poller per bot): stop it';
  return 'the Bot API refused getUpdates';
}

/** The length of `text` in characters (code points: an emoji is one), as a person counts them. */
function countCharacters(text: string): number {
  let pairs = 0;
  for (let at = 0; at < text.length - 1; at++) {
    const code = text.charCodeAt(at);
    if (code >= 0xd800 && code <= 0xdbff) {
      const next = text.charCodeAt(at + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        pairs += 1;
        at += 1;
      }
    }
  }
  return text.length - pairs;
}

/** Waits `ms`; rejects as soon as one of `signals` (native or grammY's polyfill) aborts. */
async function sleep(ms: number, signals: ReadonlyArray<SignalLike | undefined>): Promise<void> {
  const link = linkSignals(signals);
  try {
    await waitFor(ms, undefined, { signal: link.signal });
  } finally {
    link.dispose();
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
