import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ConnectorHost, Connector } from '@trellis/sdk';
import { startFakeBotApiServer, type FakeBotApiServer } from '@trellis/testing';
import { plugin, TelegramSettingsSchema } from '../src/index.ts';
import { recordingLogger, scriptedHost } from './helpers.ts';

const TOKEN = '123:test-token';
let api: FakeBotApiServer;
let connector: Connector | undefined;
const logger = recordingLogger();
const logs = logger.lines;

beforeEach(async () => {
  api = await startFakeBotApiServer({ token: TOKEN });
  logs.length = 0;
});
afterEach(async () => {
  await connector?.stop();
  connector = undefined;
  await api.close();
});

async function start(host: ConnectorHost, config: Record<string, unknown> = {}) {
  connector = await plugin.connector!.create({
    config: TelegramSettingsSchema.parse({ api_root: api.apiRoot, allowed_chat_ids: [7], poll_timeout_seconds: 1, ...config }),
    logger,
    workspace: { root: '/' },
    env: { TELEGRAM_BOT_TOKEN: TOKEN },
  });
  await connector.start(host);
}

describe('telegram connector against a local Bot API server', () => {
  it('answers allowed chats with a typing indicator, ignores others with a log line', async () => {
    const host = scriptedHost((m) => [
      { type: 'text', delta: 'x' },
      { type: 'done', reply: `you said ${m.text}` },
    ]);
    await start(host);
    api.pushMessage({ chatId: 99, text: 'let me in' });
    api.pushMessage({ chatId: 7, text: 'hello' });
    await api.waitFor(() => api.sent.length === 1, 20_000, 'a reply');
    expect(api.sent).toEqual([{ chatId: 7, text: 'you said hello' }]);
    expect(api.actions).toContainEqual({ chatId: 7, action: 'typing' });
    expect(host.seen).toEqual([{ conversationId: '7', senderId: '7', text: 'hello' }]);
    expect(logs.find((l) => l.fields?.chat === 99)).toMatchObject({
      level: 'info',
      message: expect.stringContaining('not in allowed_chat_ids'),
    });
    expect(api.actions.some((a) => a.chatId === 99)).toBe(false);
  });

  it('splits a long reply at 4,096 characters and handles /reset without the model', async () => {
    const long = `${'a'.repeat(4000)}\n${'b'.repeat(3000)}\n${'c'.repeat(100)}`;
    const host = scriptedHost(() => [{ type: 'done', reply: long }]);
    await start(host);
    api.pushMessage({ chatId: 7, text: 'write a lot' });
    await api.waitFor(() => api.sent.length === 2, 20_000, 'two parts');
    expect(api.sent.map((s) => s.text)).toEqual(['a'.repeat(4000), `${'b'.repeat(3000)}\n${'c'.repeat(100)}`]);
    api.pushMessage({ chatId: 7, text: '/reset' });
    await api.waitFor(() => api.sent.length === 3, 20_000, 'the reset answer');
    expect(api.sent[2]).toEqual({ chatId: 7, text: 'History cleared.' });
    expect(host.resets).toEqual(['7']);
    expect(host.seen).toHaveLength(1);
  });

  it('turns a failed turn or a throwing host into a short apology and a log line, and keeps serving', async () => {
    let n = 0;
    const host = scriptedHost(() => {
      n += 1;
      if (n === 1) return [{ type: 'done', reply: '', error: { code: 'PROVIDER_FAILED', message: 'upstream 502' } }];
      if (n === 2) throw new Error('host exploded');
      return [{ type: 'done', reply: 'fine again' }];
    });
    await start(host);
    api.pushMessage({ chatId: 7, text: 'one' });
    api.pushMessage({ chatId: 7, text: 'two' });
    api.pushMessage({ chatId: 7, text: 'three' });
    await api.waitFor(() => api.sent.length === 3, 20_000, 'three answers');
    const apology = TelegramSettingsSchema.parse({}).apology;
    expect(api.sent.map((s) => s.text)).toEqual([apology, apology, 'fine again']);
    expect(logs.filter((l) => l.level === 'error').map((l) => l.fields?.code ?? l.fields?.error)).toEqual([
      'PROVIDER_FAILED',
      'host exploded',
    ]);
  });

  it('answers one chat in order; stop() waits for the turn in progress and starts no other', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const host = scriptedHost(async (m) => {
      if (m.text === 'first') await gate;
      return [{ type: 'done', reply: `re ${m.text}` }];
    });
    await start(host);
    api.pushMessage({ chatId: 7, text: 'first' });
    api.pushMessage({ chatId: 7, text: 'second' });
    await api.waitFor(() => host.seen.length >= 1, 20_000, 'the first turn');
    const stopped = connector!.stop();
    let done = false;
    void stopped.then(() => (done = true));
    await new Promise((r) => setTimeout(r, 200));
    expect(done).toBe(false);
    release();
    await stopped;
    connector = undefined;
    // "second" (when it was fetched) waited behind "first": no turn starts once stopping, its chat gets the apology.
    const apology = TelegramSettingsSchema.parse({}).apology;
    expect(api.sent.map((s) => s.text)).toEqual(api.sent.length === 2 ? ['re first', apology] : ['re first']);
    expect(host.seen.map((m) => m.text)).toEqual(['first']);
  });

  it('on stop confirms the updates it handled, so a connector started after it neither repeats nor loses one', async () => {
    let stopping: Promise<void> | undefined;
    const host = scriptedHost((m) => {
      // Stopped from inside the first turn: before the runner's next poll could confirm the update.
      if (m.text === 'first') stopping ??= connector!.stop();
      return [{ type: 'done', reply: `re ${m.text}` }];
    });
    await start(host);
    const first = api.pushMessage({ chatId: 7, text: 'first' });
    await api.waitFor(() => api.sent.length === 1, 20_000, 'the first answer');
    await stopping;
    expect(logs.find((l) => l.message === 'stopped polling')).toMatchObject({ level: 'info' });
    // The last request of the stopped bot confirms everything up to the first update.
    expect(api.polls.at(-1)).toMatchObject({ offset: first + 1, timeout: 0 });

    const second = api.pushMessage({ chatId: 7, text: 'second' });
    await start(host);
    await api.waitFor(() => api.sent.some((s) => s.text === 're second'), 20_000, 'the second answer');
    expect(api.sent.map((s) => s.text)).toEqual(['re first', 're second']);
    expect(host.seen.map((m) => m.text)).toEqual(['first', 'second']);
    expect(api.polls.flatMap((p) => p.delivered).filter((id) => id === second)).not.toHaveLength(0);
  });

  it('gives up starting when nothing answers at api_root, and stop() ends a start that is still trying', { timeout: 30_000 }, async () => {
    const host = scriptedHost(() => []);
    const unreachable = async () =>
      plugin.connector!.create({
        config: TelegramSettingsSchema.parse({ api_root: 'http://127.0.0.1:1' }),
        logger,
        workspace: { root: '/' },
        env: { TELEGRAM_BOT_TOKEN: TOKEN },
      });
    await expect((await unreachable()).start(host)).rejects.toMatchObject({
      code: 'CONNECTOR_FAILED',
      message: expect.stringContaining('cannot start the bot at http://127.0.0.1:1'),
    });
    expect(logs.filter((l) => l.message === 'Bot API request failed' && l.fields?.method === 'getMe')).toHaveLength(4);

    logs.length = 0;
    const other = await unreachable();
    const starting = other.start(host);
    while (!logs.some((l) => l.message === 'Bot API request failed')) await new Promise((r) => setTimeout(r, 20));
    await other.stop();
    await expect(starting).rejects.toMatchObject({ code: 'CONNECTOR_FAILED' });
    expect(logs.filter((l) => l.message === 'Bot API request failed')).toHaveLength(1);
  });

  it('refuses to start with a token the server rejects, naming the token variable', async () => {
    const host = scriptedHost(() => []);
    const bad = await plugin.connector!.create({
      config: TelegramSettingsSchema.parse({ api_root: api.apiRoot }),
      logger,
      workspace: { root: '/' },
      env: { TELEGRAM_BOT_TOKEN: 'wrong' },
    });
    await expect(bad.start(host)).rejects.toMatchObject({
      code: 'CONNECTOR_FAILED',
      message: expect.stringContaining('TELEGRAM_BOT_TOKEN'),
    });
  });
});
