import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeBotApiServer, startFakeOpenAiServer, type FakeBotApiServer, type FakeOpenAiServer } from '@trellis/testing';
import { createSandbox, runCliAsync, type LongRunning, type Sandbox } from './cliHarness.ts';
import { messagingConfig, startRun } from './runFixture.ts';

const TOKEN = '4242:e2e-token';
const ALLOWED = 7;
const APOLOGY = 'Sorry, something went wrong and I could not answer. Please try again in a moment.';

let sandbox: Sandbox;
let model: FakeOpenAiServer;
let telegram: FakeBotApiServer;
let config: string;
let child: ChildProcess | undefined;

beforeEach(async () => {
  sandbox = createSandbox();
  model = await startFakeOpenAiServer();
  telegram = await startFakeBotApiServer({ token: TOKEN });
  config = join(sandbox.dir, 'runtime.toml');
  writeFileSync(config, messagingConfig(model, telegram, { allowed: [ALLOWED] }));
});
afterEach(async () => {
  if (child !== undefined && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  child = undefined;
  await model.close();
  await telegram.close();
  sandbox.cleanup();
});

/** Starts `trellis run` (not blocking this process, which serves both fake APIs) and waits for its "serving" line. */
async function serve(extraArgs: readonly string[] = []): Promise<LongRunning> {
  const run = await startRun(sandbox, config, TOKEN, extraArgs);
  child = run.child;
  expect(run.stdout()).toBe('');
  return run;
}

describe('trellis run with the telegram connector', () => {
  it('answers allowed chats through the model and tools, ignores others, splits long replies, and resets on /reset', async () => {
    const served = await serve();
    expect(served.logs().find((l) => l.msg === 'serving')).toMatchObject({
      component: 'trellis',
      connectors: ['telegram'],
      model: 'test/model',
    });

    // A refused chat: no answer, no model request, one log line naming the chat.
    telegram.pushMessage({ chatId: 99, text: 'hello?' });
    // An allowed chat: a tool call, then the answer.
    model.script(
      { kind: 'stream', toolCalls: [{ name: 'builtin-tools__echo', arguments: '{"message":"ping"}' }] },
      { kind: 'stream', text: ['pong'] },
    );
    telegram.pushMessage({ chatId: ALLOWED, text: 'ping' });
    await telegram.waitFor(() => telegram.sent.length === 1, 30_000, 'the answer to ping');
    expect(telegram.sent).toEqual([{ chatId: ALLOWED, text: 'pong' }]);
    expect(telegram.actions).toContainEqual({ chatId: ALLOWED, action: 'typing' });
    expect(served.logs().find((l) => l.chat === 99)).toMatchObject({
      component: 'telegram',
      level: 'info',
      msg: expect.stringContaining('not in allowed_chat_ids'),
    });
    expect(model.requests).toHaveLength(2);

    // A long reply is split at Telegram's limit.
    const long = `${'a'.repeat(4000)}\n${'b'.repeat(3000)}`;
    model.script({ kind: 'stream', text: [long] });
    telegram.pushMessage({ chatId: ALLOWED, text: 'write a lot' });
    await telegram.waitFor(() => telegram.sent.length === 3, 30_000, 'the two parts');
    expect(telegram.sent.slice(1).map((s) => s.text)).toEqual(['a'.repeat(4000), 'b'.repeat(3000)]);
    // The history carried the earlier turn…
    expect(model.requests[2]!.body.messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['ping', 'write a lot']);

    // …until /reset.
    telegram.pushMessage({ chatId: ALLOWED, text: '/reset' });
    await telegram.waitFor(() => telegram.sent.length === 4, 30_000, 'the reset answer');
    model.script({ kind: 'stream', text: ['fresh'] });
    telegram.pushMessage({ chatId: ALLOWED, text: 'new start' });
    await telegram.waitFor(() => telegram.sent.length === 5, 30_000, 'the answer after reset');
    expect(model.requests.at(-1)!.body.messages.filter((m) => m.role !== 'system')).toEqual([{ role: 'user', content: 'new start' }]);

    // A provider failure becomes an apology and a log line; the bot keeps serving.
    model.script({ kind: 'status', status: 402, message: 'Insufficient credits' }, { kind: 'stream', text: ['still here'] });
    telegram.pushMessage({ chatId: ALLOWED, text: 'costly' });
    telegram.pushMessage({ chatId: ALLOWED, text: 'again' });
    await telegram.waitFor(() => telegram.sent.length === 7, 30_000, 'apology and next answer');
    expect(telegram.sent.slice(3).map((s) => s.text)).toEqual(['History cleared.', 'fresh', APOLOGY, 'still here']);
    expect(served.logs().find((l) => l.code === 'PROVIDER_PAYMENT_REQUIRED' && l.component === 'telegram')).toMatchObject({
      level: 'error',
      chat: ALLOWED,
    });

    child!.kill('SIGINT');
    expect(await served.exited).toBe(0);
    expect(served.logs().at(-1)).toMatchObject({ msg: 'stopped', signal: 'SIGINT' });
    // The token never appears in the logs.
    expect(JSON.stringify(served.logs())).not.toContain('e2e-token');
  });

  it('on SIGTERM mid-turn stops polling, lets the turn finish within the grace period, and exits 0', async () => {
    const served = await serve(['--grace', '20']);
    model.script({ kind: 'stream', text: ['slow ', 'but ', 'complete'], chunkDelayMs: 1500 });
    telegram.pushMessage({ chatId: ALLOWED, text: 'take your time' });
    await telegram.waitFor(() => model.requests.length === 1, 30_000, 'the model request');
    child!.kill('SIGTERM');
    expect(await served.exited).toBe(0);
    expect(telegram.sent).toEqual([{ chatId: ALLOWED, text: 'slow but complete' }]);
    expect(served.logs().find((l) => l.msg === 'stopping')).toMatchObject({ signal: 'SIGTERM', running: 1, graceSeconds: 20 });
    const messages = served.logs().map((l) => l.msg);
    expect(messages.slice(messages.indexOf('stopping'))).toEqual(['stopping', 'stopped polling', 'answered', 'stopped']);
  });

  it('cancels a turn that outlives the grace period and still exits 0', async () => {
    const served = await serve(['--grace', '1']);
    model.script({ kind: 'stream', text: ['never ends'], hang: true });
    telegram.pushMessage({ chatId: ALLOWED, text: 'hang' });
    await telegram.waitFor(() => model.requests.length === 1, 30_000, 'the model request');
    child!.kill('SIGTERM');
    expect(await served.exited).toBe(0);
    const messages = served.logs().map((l) => l.msg);
    expect(messages).toContain('grace period over: cancelling running turns');
    expect(messages.at(-1)).toBe('stopped');
    expect(telegram.sent).toEqual([{ chatId: ALLOWED, text: APOLOGY }]);
  });

  it('exits 2 naming TELEGRAM_BOT_TOKEN when no connector is available', async () => {
    const result = await runCliAsync(sandbox, ['run', '--config', config], { OPENROUTER_API_KEY: 'sk-e2e' });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('telegram is unavailable');
    expect(result.stderr).toContain('TELEGRAM_BOT_TOKEN');
  });

  it('exits 1 when the connector cannot start (the Bot API refuses the token)', async () => {
    const result = await runCliAsync(sandbox, ['run', '--config', config], { OPENROUTER_API_KEY: 'sk-e2e', TELEGRAM_BOT_TOKEN: '1:wrong' });
    expect(result.code).toBe(1);
    const line = result.stderr.split('\n').find((l) => l.includes('connector failed to start'));
    expect(JSON.parse(line!)).toMatchObject({
      level: 'error',
      connector: 'telegram',
      code: 'CONNECTOR_FAILED',
      error: expect.stringContaining('TELEGRAM_BOT_TOKEN'),
    });
  });
});
