import type { ChildProcess } from 'node:child_process';
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeBotApiServer, startFakeOpenAiServer, type FakeBotApiServer, type FakeOpenAiServer } from '@trellis/testing';
import { createSandbox, type LogLine, type LongRunning, type Sandbox } from './cliHarness.ts';
import { messagingConfig, startRun, type MessagingSettings } from './runFixture.ts';

// `trellis run` on a live host follows its config: the provider and the connectors are rebuilt
// when their settings change, against the local Bot API and OpenAI-protocol servers.

const TOKEN = '4242:reload-token';
const APOLOGY = 'Sorry, something went wrong and I could not answer. Please try again in a moment.';

let sandbox: Sandbox;
let model: FakeOpenAiServer;
let telegram: FakeBotApiServer;
let config: string;
let child: ChildProcess | undefined;
/** Holds the model's first answer to "hold" until released. */
let releaseHeld: () => void;

/** Writes runtime.toml the way editors do (a temp file renamed over it). */
function writeConfig(settings: MessagingSettings = {}): void {
  writeFileSync(`${config}.tmp`, messagingConfig(model, telegram, settings));
  renameSync(`${config}.tmp`, config);
}

/** The last user message of a model request: every answer here is "re <it>", so replies name their message. */
function lastUserText(messages: ReadonlyArray<Record<string, unknown>>): string {
  return String([...messages].reverse().find((m) => m.role === 'user')?.content ?? '');
}

beforeEach(async () => {
  sandbox = createSandbox();
  const held = new Promise<void>((resolve) => (releaseHeld = resolve));
  model = await startFakeOpenAiServer({
    respond: (request) => {
      const text = lastUserText(request.body.messages);
      // "hold": a tool call held until the test releases it, then (after the tool's result) the answer.
      if (text === 'hold') {
        return request.body.messages.at(-1)?.role === 'tool'
          ? { kind: 'stream', text: ['re hold'] }
          : { kind: 'stream', toolCalls: [{ name: 'builtin-tools__echo', arguments: '{"message":"held"}' }], until: held };
      }
      if (text === 'hang') return { kind: 'stream', text: ['never ends'], hang: true };
      // "slow" keeps its turn running for a few seconds: a restart has to wait for it.
      return text === 'slow' ? { kind: 'stream', text: ['re ', 'slow'], chunkDelayMs: 1500 } : { kind: 'stream', text: [`re ${text}`] };
    },
  });
  telegram = await startFakeBotApiServer({ token: TOKEN });
  config = join(sandbox.dir, 'runtime.toml');
  writeConfig();
});
afterEach(async () => {
  if (child !== undefined && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  child = undefined;
  await model.close();
  await telegram.close();
  sandbox.cleanup();
});

async function serve(extraArgs: readonly string[] = []): Promise<LongRunning> {
  const run = await startRun(sandbox, config, TOKEN, extraArgs);
  child = run.child;
  return run;
}

const byMsg =
  (prefix: string, fields: Record<string, unknown> = {}) =>
  (line: LogLine) =>
    typeof line.msg === 'string' && line.msg.startsWith(prefix) && Object.entries(fields).every(([k, v]) => line[k] === v);
const getMes = () => telegram.calls.filter((c) => c === 'getMe').length;
const answered = (text: string) => telegram.sent.filter((s) => s.text === `re ${text}`).length;

describe('trellis run follows its config', () => {
  it('restarts the telegram connector with its changed settings, losing and repeating no update', { timeout: 120_000 }, async () => {
    const served = await serve();
    expect(getMes()).toBe(1);
    expect(telegram.polls.every((p) => p.timeout === 2)).toBe(true);

    // A turn in flight while the settings change: the old connector finishes it before it stops.
    telegram.pushMessage({ chatId: 7, text: 'slow' });
    await telegram.waitFor(() => model.requests.length === 1, 30_000, 'the slow turn');
    const mark = served.logs().length;
    writeConfig({ allowed: [7, 8], pollTimeout: 3 });
    await served.waitForLog('the restart', byMsg('connector restarting', { connector: 'telegram' }), mark);
    // The old bot no longer polls: whatever arrives now waits in the Bot API for the new one.
    await served.waitForLog('the old bot to stop polling', byMsg('stopped polling', { component: 'telegram' }), mark);
    const b = telegram.pushMessage({ chatId: 7, text: 'during the restart' });
    const c = telegram.pushMessage({ chatId: 8, text: 'newly allowed' });
    await served.waitForLog('the restarted connector', byMsg('connector restarted', { connector: 'telegram' }), mark);
    await telegram.waitFor(() => answered('during the restart') > 0 && answered('newly allowed') > 0, 30_000, 'both answers');
    // One more long poll after both: a redelivered update would have come before it.
    await telegram.waitFor(() => telegram.polls.some((p) => p.offset > c), 30_000, 'a poll confirming both');

    expect(telegram.sent.map((s) => s.text).sort()).toEqual(['re during the restart', 're newly allowed', 're slow']);
    expect(telegram.sent.find((s) => s.text === 're newly allowed')?.chatId).toBe(8);
    // A new bot (getMe again) polling with the new timeout; every update delivered once.
    expect(getMes()).toBe(2);
    expect(telegram.polls.at(-1)?.timeout).toBe(3);
    // Each reached a bot's long poll once (the old bot's last, one-update confirming request may see one too).
    const polled = telegram.polls.filter((p) => p.limit > 1).flatMap((p) => p.delivered);
    expect([b, c].map((id) => polled.filter((d) => d === id).length)).toEqual([1, 1]);
    expect(model.requests.map((r) => lastUserText(r.body.messages)).sort()).toEqual(['during the restart', 'newly allowed', 'slow']);

    child!.kill('SIGINT');
    expect(await served.exited).toBe(0);
  });

  it("uses the provider's new model for the next turn and keeps the unchanged connector's long poll", { timeout: 120_000 }, async () => {
    const served = await serve();
    const first = telegram.pushMessage({ chatId: 7, text: 'one' });
    await telegram.waitFor(() => answered('one') === 1, 30_000, 'the first answer');
    const pollsBefore = telegram.polls.length;

    // A turn in flight across the change: held at its first model request, it finishes on the old model.
    telegram.pushMessage({ chatId: 7, text: 'hold' });
    await telegram.waitFor(() => model.requests.length === 2, 30_000, 'the held request');
    const mark = served.logs().length;
    writeConfig({ model: 'test/other-model' });
    const changed = await served.waitForLog('the provider change', byMsg('provider changed', { provider: 'openrouter' }), mark);
    releaseHeld();
    await telegram.waitFor(() => answered('hold') === 1, 30_000, 'the held answer');
    expect(changed).toMatchObject({
      component: 'trellis',
      level: 'info',
      model: 'test/other-model',
      previous: { provider: 'openrouter', model: 'test/model' },
    });
    telegram.pushMessage({ chatId: 7, text: 'two' });
    await telegram.waitFor(() => answered('two') === 1, 30_000, 'the second answer');

    expect(model.requests.map((r) => [lastUserText(r.body.messages), r.body.model])).toEqual([
      ['one', 'test/model'],
      ['hold', 'test/model'],
      ['hold', 'test/model'],
      ['two', 'test/other-model'],
    ]);
    // The connector was not touched: no new bot (getMe), and its polls go on from the confirmed offset.
    expect(getMes()).toBe(1);
    const after = telegram.polls.slice(pollsBefore);
    expect(after.length).toBeGreaterThan(0);
    expect(after.every((p) => p.offset > first && p.timeout === 2)).toBe(true);
    expect(
      served
        .logs()
        .slice(mark)
        .filter((l) => typeof l.connector === 'string'),
    ).toEqual([]);

    child!.kill('SIGINT');
    expect(await served.exited).toBe(0);
  });

  it(
    'keeps a connector with newly invalid settings running, stops answering without a provider, and stops and starts the connector',
    { timeout: 150_000 },
    async () => {
      const served = await serve();

      // Invalid connector settings: an error line naming the plugin and key; the old bot keeps answering.
      let mark = served.logs().length;
      writeConfig({ apiRoot: 'ftp://nowhere' });
      const invalid = await served.waitForLog('the invalid settings', byMsg('connector settings are invalid'), mark);
      expect(invalid).toMatchObject({
        level: 'error',
        connector: 'telegram',
        code: 'CONFIG_INVALID',
        keys: ['plugins.entries.telegram.config.api_root'],
      });
      telegram.pushMessage({ chatId: 7, text: 'still there?' });
      await telegram.waitFor(() => answered('still there?') === 1, 30_000, 'an answer from the old bot');
      // Fixed back to what runs: nothing to restart.
      mark = served.logs().length;
      writeConfig();
      await served.waitForLog('the fixing reload', (l) => l.component === 'reload' && l.status === 'applied', mark);
      expect(getMes()).toBe(1);

      // Valid settings that cannot start (nothing listens there): the connector comes back with the previous ones.
      mark = served.logs().length;
      writeConfig({ apiRoot: 'http://127.0.0.1:1' });
      expect(await served.waitForLog('the failed start', byMsg('connector failed to start with its new settings'), mark)).toMatchObject({
        level: 'error',
        connector: 'telegram',
        code: 'CONNECTOR_FAILED',
        error: expect.stringContaining('http://127.0.0.1:1'),
      });
      await served.waitForLog('the fallback', byMsg('connector runs with its previous settings', { connector: 'telegram' }), mark);
      telegram.pushMessage({ chatId: 7, text: 'after the fallback' });
      await telegram.waitFor(() => answered('after the fallback') === 1, 30_000, 'an answer after the fallback');
      mark = served.logs().length;
      writeConfig();
      await served.waitForLog('the reload back', (l) => l.component === 'reload' && l.status === 'applied', mark);
      expect(
        served
          .logs()
          .slice(mark)
          .filter((l) => typeof l.connector === 'string'),
      ).toEqual([]);
      const bots = getMes();

      // The provider disabled: turns fail with a clear log line and the chat gets the apology.
      mark = served.logs().length;
      writeConfig({ openrouterEnabled: false });
      expect(await served.waitForLog('the provider removal', byMsg('no provider'), mark)).toMatchObject({
        level: 'error',
        provider: 'openrouter',
        code: 'PROVIDER_UNAVAILABLE',
        error: expect.stringContaining('openrouter is disabled'),
      });
      const requests = model.requests.length;
      telegram.pushMessage({ chatId: 7, text: 'anyone?' });
      await telegram.waitFor(() => telegram.sent.some((s) => s.text === APOLOGY), 30_000, 'the apology');
      expect(model.requests.length).toBe(requests);
      expect(served.logs().find((l) => l.component === 'telegram' && l.code === 'PROVIDER_UNAVAILABLE')).toMatchObject({ level: 'error' });
      mark = served.logs().length;
      writeConfig();
      await served.waitForLog('the provider back', byMsg('provider changed', { provider: 'openrouter' }), mark);
      telegram.pushMessage({ chatId: 7, text: 'back' });
      await telegram.waitFor(() => answered('back') === 1, 30_000, 'an answer with the provider back');

      // The connector disabled: it stops; a message sent meanwhile waits and is answered once it is back.
      mark = served.logs().length;
      writeConfig({ telegramEnabled: false });
      await served.waitForLog('the connector stop', byMsg('connector stopped', { connector: 'telegram' }), mark);
      await served.waitForLog('the idle warning', byMsg('no connector is running'), mark);
      const waiting = telegram.pushMessage({ chatId: 7, text: 'while away' });
      mark = served.logs().length;
      writeConfig();
      await served.waitForLog('the connector start', byMsg('connector started', { connector: 'telegram' }), mark);
      await telegram.waitFor(() => answered('while away') === 1, 30_000, 'the message sent while it was stopped');
      await telegram.waitFor(() => telegram.polls.some((p) => p.offset > waiting), 30_000, 'a poll confirming it');
      expect(answered('while away')).toBe(1);
      expect(getMes()).toBe(bots + 1);

      child!.kill('SIGINT');
      expect(await served.exited).toBe(0);
    },
  );

  it("gives a removed connector's running turn the grace period, then cancels it", { timeout: 120_000 }, async () => {
    const served = await serve(['--grace', '1']);
    telegram.pushMessage({ chatId: 7, text: 'hang' });
    await telegram.waitFor(() => model.requests.length === 1, 30_000, 'the hanging turn');
    const mark = served.logs().length;
    writeConfig({ telegramEnabled: false });
    expect(await served.waitForLog('the connector stopping', byMsg('connector stopping', { connector: 'telegram' }), mark)).toMatchObject({
      running: 1,
      reason: expect.stringContaining('enabled = false'),
    });
    expect(
      await served.waitForLog('the end of the grace period', byMsg('grace period over', { connector: 'telegram' }), mark),
    ).toMatchObject({ level: 'warn', running: 1 });
    await served.waitForLog('the connector stopped', byMsg('connector stopped', { connector: 'telegram' }), mark);
    // The cancelled turn's chat got the apology before the bot went away; the process keeps serving.
    expect(telegram.sent).toEqual([{ chatId: 7, text: APOLOGY }]);
    expect(child!.exitCode).toBe(null);

    child!.kill('SIGINT');
    expect(await served.exited).toBe(0);
    expect(served.logs().at(-1)).toMatchObject({ msg: 'stopped', signal: 'SIGINT' });
  });
});
