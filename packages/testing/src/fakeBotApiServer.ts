// A local Telegram Bot API server for tests: enough of getMe, getUpdates (long polling),
// sendMessage and sendChatAction for grammY and @grammyjs/runner to run against it unchanged
// (`api_root` points the bot here). Tests push messages in and read what the bot sent.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A `sendMessage` the bot made. */
export interface SentMessage {
  readonly chatId: number;
  readonly text: string;
}

/** One getUpdates request as the server saw it, and the update ids it answered with. */
export interface ObservedPoll {
  readonly offset: number;
  readonly timeout: number;
  readonly limit: number;
  /** The update ids in the answer (empty when the poll timed out or was abandoned). */
  readonly delivered: number[];
}

/** A running fake Bot API server. */
export interface FakeBotApiServer {
  /** The `api_root` to give grammY (`http://127.0.0.1:<port>`). */
  readonly apiRoot: string;
  /** Every sendMessage, in order. */
  readonly sent: SentMessage[];
  /** Every sendChatAction, in order. */
  readonly actions: Array<{ readonly chatId: number; readonly action: string }>;
  /** Every method called, in order (getUpdates included). */
  readonly calls: string[];
  /** Every getUpdates, in the order they arrived: a bot's offsets show which updates it confirmed. */
  readonly polls: ObservedPoll[];
  /** Queues a text message from a user in a private chat; returns its update id. */
  pushMessage(message: { readonly chatId: number; readonly text: string; readonly fromId?: number }): number;
  /** Resolves when `predicate` holds (checked after every request), or rejects after `timeoutMs`. */
  waitFor(predicate: () => boolean, timeoutMs?: number, what?: string): Promise<void>;
  /** Number of getUpdates requests held open right now. */
  openPolls(): number;
  close(): Promise<void>;
}

/** Starts the fake Bot API on 127.0.0.1, port 0. Accepts only `token`. */
export async function startFakeBotApiServer(options: { readonly token: string }): Promise<FakeBotApiServer> {
  const updates: Array<{ update_id: number; message: Record<string, unknown> }> = [];
  const sent: SentMessage[] = [];
  const actions: Array<{ chatId: number; action: string }> = [];
  const calls: string[] = [];
  const observedPolls: ObservedPoll[] = [];
  const polls = new Set<() => void>();
  const waiters = new Set<() => void>();
  let nextUpdateId = 1;
  let nextMessageId = 1;

  const notify = () => {
    for (const poll of [...polls]) poll();
    for (const waiter of [...waiters]) waiter();
  };
  const reply = (res: ServerResponse, result: unknown) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, result }));
  };
  const fail = (res: ServerResponse, status: number, description: string) => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: false, error_code: status, description }));
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const match = /^\/bot([^/]+)\/(\w+)/.exec(req.url ?? '');
    if (match === null) return fail(res, 404, 'Not Found');
    if (match[1] !== options.token) return fail(res, 401, 'Unauthorized');
    const method = match[2]!;
    const text = Buffer.concat(chunks).toString('utf8');
    const body = (text === '' ? {} : JSON.parse(text)) as Record<string, unknown>;
    calls.push(method);
    try {
      switch (method) {
        case 'getMe':
          return reply(res, {
            id: 42,
            is_bot: true,
            first_name: 'Trellis test bot',
            username: 'trellis_test_bot',
            can_join_groups: true,
            can_read_all_group_messages: false,
            supports_inline_queries: false,
          });
        case 'deleteWebhook':
          return reply(res, true);
        case 'getUpdates': {
          const offset = typeof body.offset === 'number' ? body.offset : 0;
          const observed: ObservedPoll = {
            offset,
            timeout: typeof body.timeout === 'number' ? body.timeout : 0,
            limit: typeof body.limit === 'number' ? body.limit : 100,
            delivered: [],
          };
          observedPolls.push(observed);
          while (updates.length > 0 && updates[0]!.update_id < offset) updates.shift();
          if (updates.length === 0) {
            const timeoutSeconds = typeof body.timeout === 'number' ? body.timeout : 0;
            await new Promise<void>((resolve) => {
              const done = () => {
                polls.delete(done);
                clearTimeout(timer);
                resolve();
              };
              const timer = setTimeout(done, Math.min(timeoutSeconds, 30) * 1000);
              polls.add(done);
              res.once('close', done);
            });
            while (updates.length > 0 && updates[0]!.update_id < offset) updates.shift();
          }
          if (res.destroyed) return;
          const answer = updates.slice(0, observed.limit);
          observed.delivered.push(...answer.map((u) => u.update_id));
          return reply(res, answer);
        }
        case 'sendMessage': {
          const chatId = Number(body.chat_id);
          if (typeof body.text !== 'string' || body.text.length === 0) return fail(res, 400, 'Bad Request: message text is empty');
          if (body.text.length > 4096) return fail(res, 400, 'Bad Request: message is too long');
          sent.push({ chatId, text: body.text });
          return reply(res, {
            message_id: nextMessageId++,
            date: Math.floor(Date.now() / 1000),
            chat: { id: chatId, type: 'private' },
            text: body.text,
          });
        }
        case 'sendChatAction':
          actions.push({ chatId: Number(body.chat_id), action: String(body.action) });
          return reply(res, true);
        default:
          return fail(res, 404, `Not Found: method ${method}`);
      }
    } finally {
      notify();
    }
  }

  const server = createServer((req, res) => {
    void handle(req, res).catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    apiRoot: `http://127.0.0.1:${port}`,
    sent,
    actions,
    calls,
    polls: observedPolls,
    pushMessage({ chatId, text, fromId }) {
      const updateId = nextUpdateId++;
      updates.push({
        update_id: updateId,
        message: {
          message_id: 1000 + updateId,
          date: Math.floor(Date.now() / 1000),
          chat: { id: chatId, type: 'private', first_name: 'Tester' },
          from: { id: fromId ?? chatId, is_bot: false, first_name: 'Tester' },
          text,
          ...(text.startsWith('/') ? { entities: [{ type: 'bot_command', offset: 0, length: text.split(' ')[0]!.length }] } : {}),
        },
      });
      notify();
      return updateId;
    },
    waitFor(predicate, timeoutMs = 20_000, what = 'the condition') {
      if (predicate()) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const check = () => {
          if (!predicate()) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(
              `fake Bot API: timed out after ${timeoutMs} ms waiting for ${what}; calls so far: ${calls.join(', ')}; sent: ${JSON.stringify(sent)}`,
            ),
          );
        }, timeoutMs);
        waiters.add(check);
      });
    },
    openPolls: () => polls.size,
    close: () =>
      new Promise<void>((resolve) => {
        for (const poll of [...polls]) poll();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
