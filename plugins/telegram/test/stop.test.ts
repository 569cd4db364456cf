import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Connector, ConnectorHost } from '@trellis/sdk';
import { startBotApiProxy, startFakeBotApiServer, type BotApiProxy, type FakeBotApiServer, type Interception } from '@trellis/testing';
import { plugin, TelegramSettingsSchema } from '../src/index.ts';
import { recordingLogger, scriptedHost, until } from './helpers.ts';

// Bounded starts and stops: a Bot API that accepts a request and never answers, a stop that comes
// while turns wait, and what the stopped bot confirms to Telegram.

const TOKEN = '123:test-token';
let api: FakeBotApiServer;
let proxy: BotApiProxy | undefined;
const connectors: Connector[] = [];
let logger = recordingLogger();

beforeEach(async () => {
  api = await startFakeBotApiServer({ token: TOKEN });
  logger = recordingLogger();
});
afterEach(async () => {
  // A second stop() ends whatever a test left hanging.
  await Promise.all(connectors.splice(0).map((c) => (void c.stop(), c.stop())));
  await proxy?.close();
  proxy = undefined;
  await api.close();
});

async function proxied(intercept: (method: string, body: Record<string, unknown>, count: number) => Interception | undefined) {
  proxy = await startBotApiProxy({ target: api.apiRoot, intercept });
  return proxy.apiRoot;
}

async function create(config: Record<string, unknown> = {}): Promise<Connector> {
  const connector = await plugin.connector!.create({
    config: TelegramSettingsSchema.parse({ api_root: api.apiRoot, allowed_chat_ids: [7, 8], poll_timeout_seconds: 1, ...config }),
    logger,
    workspace: { root: '/' },
    env: { TELEGRAM_BOT_TOKEN: TOKEN },
  });
  connectors.push(connector);
  return connector;
}

async function start(host: ConnectorHost, config: Record<string, unknown> = {}): Promise<Connector> {
  const connector = await create(config);
  await connector.start(host);
  return connector;
}

const settled = (promise: Promise<unknown>) => {
  const state = { done: false };
  void promise.then(
    () => (state.done = true),
    () => (state.done = true),
  );
  return state;
};

describe('telegram connector: bounded start and stop', () => {
  it('fails a start whose getMe is never answered after api_timeout_seconds', async () => {
    const apiRoot = await proxied((method) => (method === 'getMe' ? { kind: 'hang' } : undefined));
    const connector = await create({ api_root: apiRoot, api_timeout_seconds: 1 });
    const began = Date.now();
    await expect(connector.start(scriptedHost(() => []))).rejects.toMatchObject({
      code: 'CONNECTOR_FAILED',
      message: expect.stringContaining('the Bot API did not answer getMe within 1 s'),
    });
    expect(Date.now() - began).toBeLessThan(10_000);
    // A timeout is final: no second attempt at a server that accepts and never answers.
    expect(proxy!.calls).toEqual(['getMe']);
  });

  it('gives up a send the Bot API never answers after api_timeout_seconds, and the chat still gets the apology', async () => {
    const apiRoot = await proxied((method, _body, count) => (method === 'sendMessage' && count === 0 ? { kind: 'hang' } : undefined));
    const connector = await start(
      scriptedHost(() => [{ type: 'done', reply: 'hello' }]),
      { api_root: apiRoot, api_timeout_seconds: 1 },
    );
    api.pushMessage({ chatId: 7, text: 'hi' });
    await api.waitFor(() => api.sent.length === 1, 10_000, 'the apology');
    expect(api.sent).toEqual([{ chatId: 7, text: TelegramSettingsSchema.parse({}).apology }]);
    expect(logger.lines.find((l) => l.message === 'Bot API request failed')).toMatchObject({
      level: 'warn',
      fields: { method: 'sendMessage', error: 'the Bot API did not answer sendMessage within 1 s' },
    });
    await connector.stop();
  });

  it('a second stop() abandons a reply the Bot API never answers, says so, and still confirms the update', async () => {
    const apiRoot = await proxied((method) => (method === 'sendMessage' ? { kind: 'hang' } : undefined));
    const connector = await start(
      scriptedHost(() => [{ type: 'done', reply: 'hello' }]),
      { api_root: apiRoot },
    );
    const id = api.pushMessage({ chatId: 7, text: 'hi' });
    await until(() => proxy!.hanging() === 1, 'the hanging sendMessage');
    const first = connector.stop();
    const firstDone = settled(first);
    await new Promise((r) => setTimeout(r, 300));
    expect(firstDone.done).toBe(false);

    const began = Date.now();
    await Promise.all([connector.stop(), first]);
    expect(Date.now() - began).toBeLessThan(5_000);
    expect(logger.lines.find((l) => l.message.startsWith('stopping now'))).toMatchObject({
      level: 'warn',
      fields: { abandoned: [{ update_id: id, chat: 7, stage: 'sending' }] },
    });
    await until(() => proxy!.hanging() === 0, 'the abandoned request to close');
    // Its turn ran: confirmed, so the next start does not run it (and its tools) again.
    expect(api.polls.at(-1)).toMatchObject({ offset: id + 1, timeout: 0 });
    expect(logger.lines.filter((l) => l.level === 'error')).toEqual([]);
  });

  it('does not start the turns waiting when it stops: their chats get the apology, to ask again', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const host = scriptedHost(async (m) => {
      if (m.text === 'first') await gate;
      return [{ type: 'done', reply: `re ${m.text}` }];
    });
    const connector = await start(host);
    api.pushMessage({ chatId: 7, text: 'first' });
    const second = api.pushMessage({ chatId: 7, text: 'second' });
    // The runner's next poll, sent at once, carries an offset past both: Telegram will not hand them out again.
    await api.waitFor(() => api.polls.some((p) => p.offset > second), 10_000, 'a poll past the second message');
    await until(() => host.seen.length === 1, 'the first turn');
    const stopping = connector.stop();
    release();
    await stopping;
    expect(api.sent.map((s) => s.text)).toEqual(['re first', TelegramSettingsSchema.parse({}).apology]);
    expect(host.seen.map((m) => m.text)).toEqual(['first']);
    expect(logger.lines.find((l) => l.message.startsWith('not answered'))).toMatchObject({
      level: 'warn',
      fields: { chat: 7, update_id: second },
    });
    expect(api.polls.at(-1)).toMatchObject({ offset: second + 1, timeout: 0 });
  });
  it('gives a confirmation the Bot API never answers 2 s at stop, and a second stop() ends it at once', async () => {
    const apiRoot = await proxied((method, body) =>
      method === 'getUpdates' && body.limit === 1 && body.timeout === 0 ? { kind: 'hang' } : undefined,
    );
    const host = scriptedHost((m) => [{ type: 'done', reply: `re ${m.text}` }]);
    const answered = async (connector: Connector, text: string) => {
      api.pushMessage({ chatId: 7, text });
      await api.waitFor(() => api.sent.some((s) => s.text === `re ${text}`), 10_000, `the answer to ${text}`);
      return connector;
    };

    // No turn running, api_timeout_seconds at its default 15 s: the stop still ends in about 2 s.
    let connector = await answered(await start(host, { api_root: apiRoot }), 'one');
    let began = Date.now();
    await connector.stop();
    expect(Date.now() - began).toBeGreaterThanOrEqual(1_900);
    expect(Date.now() - began).toBeLessThan(3_000);
    expect(logger.lines.filter((l) => l.message.startsWith('could not confirm')).map((l) => [l.level, l.fields?.error])).toEqual([
      ['warn', 'the Bot API did not answer getUpdates within 2 s'],
    ]);

    connector = await answered(await start(host, { api_root: apiRoot }), 'two');
    const first = connector.stop();
    await until(() => proxy!.hanging() === 1, 'the hanging confirmation');
    began = Date.now();
    await Promise.all([connector.stop(), first]);
    expect(Date.now() - began).toBeLessThan(500);
    expect(logger.lines.filter((l) => l.level === 'error')).toEqual([]);
  });
});
