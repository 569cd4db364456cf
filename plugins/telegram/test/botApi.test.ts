import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Connector, ConnectorHost } from '@trellis/sdk';
import { startBotApiProxy, startFakeBotApiServer, type BotApiProxy, type FakeBotApiServer, type Interception } from '@trellis/testing';
import { plugin, TelegramSettingsSchema } from '../src/index.ts';
import { recordingLogger, scriptedHost, until } from './helpers.ts';

// A Bot API that misbehaves: rate limits, answers that are not updates, the same update twice,
// and messages far longer than a model should be handed.

const TOKEN = '123:test-token';
let api: FakeBotApiServer;
let proxy: BotApiProxy | undefined;
let connector: Connector | undefined;
let logger = recordingLogger();

beforeEach(async () => {
  api = await startFakeBotApiServer({ token: TOKEN });
  logger = recordingLogger();
});
afterEach(async () => {
  await connector?.stop();
  connector = undefined;
  await proxy?.close();
  proxy = undefined;
  await api.close();
});

async function proxied(intercept: (method: string, body: Record<string, unknown>, count: number) => Interception | undefined) {
  proxy = await startBotApiProxy({ target: api.apiRoot, intercept });
  return proxy.apiRoot;
}

async function start(host: ConnectorHost, config: Record<string, unknown> = {}): Promise<void> {
  connector = await plugin.connector!.create({
    config: TelegramSettingsSchema.parse({ api_root: api.apiRoot, allowed_chat_ids: [7], poll_timeout_seconds: 1, ...config }),
    logger,
    workspace: { root: '/' },
    env: { TELEGRAM_BOT_TOKEN: TOKEN },
  });
  await connector.start(host);
}

/** A text message update from chat 7, as the Bot API sends it. */
const messageUpdate = (updateId: number, text: string) => ({
  update_id: updateId,
  message: {
    message_id: updateId,
    date: Math.floor(Date.now() / 1000),
    chat: { id: 7, type: 'private', first_name: 'Tester' },
    from: { id: 7, is_bot: false, first_name: 'Tester' },
    text,
  },
});

describe('telegram connector against a misbehaving Bot API', () => {
  it('says so when the Bot API refuses getUpdates for good (a revoked token), without an unhandled rejection', async () => {
    const rejections: unknown[] = [];
    const onRejection = (reason: unknown) => rejections.push(reason);
    process.on('unhandledRejection', onRejection);
    try {
      const apiRoot = await proxied((method, _body, count) =>
        method === 'getUpdates' && count >= 1
          ? { kind: 'answer', status: 401, body: JSON.stringify({ ok: false, error_code: 401, description: 'Unauthorized' }) }
          : undefined,
      );
      await start(
        scriptedHost(() => []),
        { api_root: apiRoot },
      );
      await until(() => logger.lines.some((l) => l.message.startsWith('polling stopped')), 'the polling-stopped line');
      await new Promise((resolve) => setImmediate(resolve));
      expect(rejections).toEqual([]);
      expect(logger.lines.find((l) => l.message.startsWith('polling stopped'))).toMatchObject({
        level: 'error',
        message:
          'polling stopped: the Bot API refused the token (401); check TELEGRAM_BOT_TOKEN; the bot answers nothing until trellis run is restarted',
      });
    } finally {
      process.off('unhandledRejection', onRejection);
    }
  });
  it('waits out a 429 in the middle of a long reply, then sends the rest in order', async () => {
    const apiRoot = await proxied((method, _body, count) =>
      method === 'sendMessage' && count === 1
        ? {
            kind: 'answer',
            status: 429,
            body: JSON.stringify({
              ok: false,
              error_code: 429,
              description: 'Too Many Requests: retry after 1',
              parameters: { retry_after: 1 },
            }),
          }
        : undefined,
    );
    const parts = ['a'.repeat(4000), 'b'.repeat(4000), 'c'.repeat(100)];
    await start(
      scriptedHost(() => [{ type: 'done', reply: parts.join('\n') }]),
      { api_root: apiRoot },
    );
    api.pushMessage({ chatId: 7, text: 'write a lot' });
    await api.waitFor(() => api.sent.length === 3, 10_000, 'three parts');
    expect(api.sent.map((s) => s.text)).toEqual(parts);
    expect(logger.lines.filter((l) => l.message.startsWith('Bot API rate limit'))).toEqual([
      {
        level: 'warn',
        message: 'Bot API rate limit: waiting before trying again',
        fields: { method: 'sendMessage', retry_after: 1, attempt: 1 },
      },
    ]);
    expect(logger.lines.filter((l) => l.level === 'error')).toEqual([]);
  });

  it('pauses polling while getUpdates answers are not updates, and serves again once they are', async () => {
    const garbage = [
      'this is not JSON',
      JSON.stringify({ ok: true, result: { update_id: 1 } }),
      JSON.stringify({ ok: true, result: [{ nope: 1 }] }),
    ];
    let broken = true;
    let bad = 0;
    const apiRoot = await proxied((method) => {
      if (method !== 'getUpdates' || !broken) return undefined;
      return { kind: 'answer', status: 200, body: garbage[bad++ % garbage.length]! };
    });
    const host = scriptedHost((m) => [{ type: 'done', reply: `re ${m.text}` }]);
    await start(host, { api_root: apiRoot });
    await until(() => bad >= 1, 'the first broken poll');
    await new Promise((r) => setTimeout(r, 1500));
    // Paused 0.25, 0.5, 1 s…: a handful of polls in 1.5 s, where a loop would make hundreds.
    expect(bad).toBeLessThanOrEqual(6);
    expect(logger.lines.some((l) => l.message.startsWith('Bot API answered getUpdates with something that is not a list'))).toBe(true);
    broken = false;
    api.pushMessage({ chatId: 7, text: 'still there?' });
    await api.waitFor(() => api.sent.length === 1, 10_000, 'the answer after the server recovered');
    expect(api.sent).toEqual([{ chatId: 7, text: 're still there?' }]);
    expect(host.seen.map((m) => m.text)).toEqual(['still there?']);
  });

  it('answers an update delivered twice (in one answer, and again later) once', async () => {
    const update = messageUpdate(1, 'only once');
    const apiRoot = await proxied((method, _body, count) =>
      method === 'getUpdates' && count < 2
        ? { kind: 'answer', status: 200, body: JSON.stringify({ ok: true, result: count === 0 ? [update, update] : [update] }) }
        : undefined,
    );
    const host = scriptedHost((m) => [{ type: 'done', reply: `re ${m.text}` }]);
    await start(host, { api_root: apiRoot });
    await until(() => proxy!.calls.filter((c) => c === 'getUpdates').length >= 3, 'a third poll');
    await api.waitFor(() => api.sent.length >= 1, 10_000, 'the answer');
    expect(host.seen.map((m) => m.text)).toEqual(['only once']);
    expect(api.sent).toEqual([{ chatId: 7, text: 're only once' }]);
    expect(logger.lines.filter((l) => l.message.startsWith('update delivered again')).map((l) => l.fields)).toEqual([
      { update_id: 1 },
      { update_id: 1 },
    ]);
  });

  it('answers a message longer than max_message_chars with a short note, without the agent', async () => {
    const host = scriptedHost(() => [{ type: 'done', reply: 'should not happen' }]);
    await start(host);
    api.pushMessage({ chatId: 7, text: 'x'.repeat(16_001) });
    await api.waitFor(() => api.sent.length === 1, 10_000, 'the note');
    expect(api.sent).toEqual([
      { chatId: 7, text: 'That message is too long for me: 16001 characters, and I read at most 16000. Please send a shorter one.' },
    ]);
    expect(host.seen).toEqual([]);
    expect(logger.lines.find((l) => l.message.startsWith('message too long'))).toMatchObject({
      level: 'info',
      fields: { chat: 7, chars: 16_001, limit: 16_000 },
    });
  });
  it('counts max_message_chars in characters, an emoji as one', async () => {
    const host = scriptedHost((m) => [{ type: 'done', reply: `read ${m.text}` }]);
    await start(host, { max_message_chars: 10 });
    api.pushMessage({ chatId: 7, text: '😀'.repeat(10) });
    api.pushMessage({ chatId: 7, text: '😀'.repeat(11) });
    await api.waitFor(() => api.sent.length === 2, 10_000, 'two answers');
    expect(api.sent.map((s) => s.text)).toEqual([
      `read ${'😀'.repeat(10)}`,
      'That message is too long for me: 11 characters, and I read at most 10. Please send a shorter one.',
    ]);
    expect(host.seen.map((m) => m.text)).toEqual(['😀'.repeat(10)]);
  });

  it('keeps the token out of the log and of the start error when the Bot API echoes the request path', async () => {
    const echo = (status: number, description: string): Interception => ({
      kind: 'answer',
      status,
      body: JSON.stringify({ ok: false, error_code: status, description }),
    });
    const apiRoot = await proxied((method, _body, count) => {
      if (method === 'getMe' && count === 0) return echo(401, `Unauthorized: no bot at /bot${TOKEN}/getMe`);
      if (method === 'sendMessage' && count === 0) return echo(400, `Bad Request: no chat for /BOT${TOKEN.toUpperCase()}/SENDMESSAGE`);
      return undefined;
    });
    await expect(
      start(
        scriptedHost(() => []),
        { api_root: apiRoot },
      ),
    ).rejects.toMatchObject({
      code: 'CONNECTOR_FAILED',
      message: `telegram: cannot start the bot at ${apiRoot}: Call to 'getMe' failed! (401: Unauthorized: no bot at /bot123:[redacted]/getMe); check TELEGRAM_BOT_TOKEN and api_root`,
    });
    await start(
      scriptedHost(() => [{ type: 'done', reply: 'hello' }]),
      { api_root: apiRoot },
    );
    api.pushMessage({ chatId: 7, text: 'hi' });
    await api.waitFor(() => api.sent.length === 1, 10_000, 'the apology');
    expect(logger.lines.filter((l) => l.message === 'Bot API error' || l.level === 'error')).toEqual([
      {
        level: 'warn',
        message: 'Bot API error',
        fields: { method: 'getMe', code: 401, description: 'Unauthorized: no bot at /bot123:[redacted]/getMe' },
      },
      {
        level: 'warn',
        message: 'Bot API error',
        fields: { method: 'sendMessage', code: 400, description: 'Bad Request: no chat for /BOT123:[redacted]/SENDMESSAGE' },
      },
      {
        level: 'error',
        message: 'could not answer; sent an apology',
        fields: {
          chat: 7,
          error: "Call to 'sendMessage' failed! (400: Bad Request: no chat for /BOT123:[redacted]/SENDMESSAGE)",
        },
      },
    ]);
    expect(JSON.stringify(logger.lines).toLowerCase()).not.toContain('test-token');
  });
});
