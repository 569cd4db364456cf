import type { ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  startBotApiProxy,
  startFakeBotApiServer,
  startFakeOpenAiServer,
  type BotApiProxy,
  type FakeBotApiServer,
  type FakeOpenAiServer,
} from '@trellis/testing';
import { pidsMentioning } from '@trellis/test-support';
import { createSandbox, startLongRunning, type LogLine, type LongRunning, type Sandbox } from './cliHarness.ts';
import { messagingConfig, startRun, type MessagingSettings } from './runFixture.ts';

// `trellis run` always ends, and soon: a signal while the connector starts, a Bot API that takes a
// reply and never answers, a second signal, and messages still waiting when the signal comes.

const TOKEN = '4242:shutdown-token';
const ALLOWED = 7;
const APOLOGY = 'Sorry, something went wrong and I could not answer. Please try again in a moment.';

let sandbox: Sandbox;
let model: FakeOpenAiServer;
let telegram: FakeBotApiServer;
let proxy: BotApiProxy | undefined;
let silent: Server | undefined;
let config: string;
let child: ChildProcess | undefined;

beforeEach(async () => {
  sandbox = createSandbox();
  model = await startFakeOpenAiServer();
  telegram = await startFakeBotApiServer({ token: TOKEN });
  config = join(sandbox.dir, 'runtime.toml');
});
afterEach(async () => {
  if (child !== undefined && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  child = undefined;
  await proxy?.close();
  proxy = undefined;
  silent?.closeAllConnections();
  await new Promise((resolve) => (silent === undefined ? resolve(undefined) : silent.close(resolve)));
  silent = undefined;
  await model.close();
  await telegram.close();
  sandbox.cleanup();
});

function writeConfig(settings: MessagingSettings): void {
  writeFileSync(config, messagingConfig(model, telegram, { allowed: [ALLOWED], ...settings }));
}

async function serve(extraArgs: readonly string[] = []): Promise<LongRunning> {
  const run = await startRun(sandbox, config, TOKEN, extraArgs);
  child = run.child;
  return run;
}

/** The exit code, or a failure when the process is still running after `ms` (a generous bound, not a timing claim). */
async function exitWithin(run: LongRunning, ms: number): Promise<number | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`trellis run still running ${ms} ms after the signal:\n${run.stderr()}`)), ms);
  });
  try {
    return await Promise.race([run.exited, late]);
  } finally {
    clearTimeout(timer);
  }
}

async function until(predicate: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const messages = (run: LongRunning) => run.logs().map((l) => l.msg);
const byMsg = (prefix: string) => (line: LogLine) => typeof line.msg === 'string' && line.msg.startsWith(prefix);

/** A Bot API that accepts every request and never answers; `seen` lists the paths. */
async function startSilentBotApi(): Promise<{ apiRoot: string; seen: string[] }> {
  const seen: string[] = [];
  silent = createServer((req) => void seen.push(req.url ?? ''));
  await new Promise<void>((resolve) => silent!.listen(0, '127.0.0.1', resolve));
  return { apiRoot: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`, seen };
}

/** The real fake Bot API behind a proxy that never answers a sendMessage. */
async function withHangingSends(): Promise<string> {
  proxy = await startBotApiProxy({
    target: telegram.apiRoot,
    intercept: (method) => (method === 'sendMessage' ? { kind: 'hang' } : undefined),
  });
  return proxy.apiRoot;
}

describe('trellis run shuts down in bounded time', () => {
  it('a signal while the connector starts (getMe never answered) ends the start and exits 0', async () => {
    const bot = await startSilentBotApi();
    writeConfig({ apiRoot: bot.apiRoot, telegram: { api_timeout_seconds: 300 } });
    const run = startLongRunning(sandbox, ['run', '--config', config], { OPENROUTER_API_KEY: 'sk-e2e', TELEGRAM_BOT_TOKEN: TOKEN });
    child = run.child;
    await until(() => bot.seen.some((path) => path.endsWith('/getMe')), 'the getMe request');
    child.kill('SIGTERM');
    expect(await exitWithin(run, 10_000)).toBe(0);
    expect(run.logs().find((l) => l.msg === 'stopping')).toMatchObject({ component: 'trellis', signal: 'SIGTERM', running: 0 });
    expect(run.logs().at(-1)).toMatchObject({ msg: 'stopped', signal: 'SIGTERM' });
    expect(messages(run)).not.toContain('serving');
    expect(messages(run)).not.toContain('connector failed to start');
    expect(run.stdout()).toBe('');
  });

  it('abandons a reply the Bot API never answers shortly after the grace period, says so, and exits 0', async () => {
    const apiRoot = await withHangingSends();
    writeConfig({ apiRoot, telegram: { api_timeout_seconds: 300 } });
    const served = await serve(['--grace', '1']);
    model.script({ kind: 'stream', text: ['hello'] });
    const update = telegram.pushMessage({ chatId: ALLOWED, text: 'hi' });
    await until(() => proxy!.hanging() === 1, 'the hanging sendMessage');
    child!.kill('SIGTERM');
    expect(await exitWithin(served, 20_000)).toBe(0);
    expect(served.logs().find(byMsg('connectors still stopping'))).toMatchObject({ component: 'trellis', connectors: ['telegram'] });
    expect(served.logs().find(byMsg('stopping now: abandoned'))).toMatchObject({
      component: 'telegram',
      level: 'warn',
      abandoned: [{ update_id: update, chat: ALLOWED, stage: 'sending' }],
    });
    expect(served.logs().at(-1)).toMatchObject({ msg: 'stopped', signal: 'SIGTERM' });
    expect(messages(served)).not.toContain('connectors did not stop in time; leaving them behind');
  });

  it('a second signal abandons what is in flight at once, long before the grace period ends', async () => {
    const apiRoot = await withHangingSends();
    writeConfig({ apiRoot, telegram: { api_timeout_seconds: 300 } });
    const served = await serve(['--grace', '120']);
    model.script({ kind: 'stream', text: ['hello'] });
    telegram.pushMessage({ chatId: ALLOWED, text: 'hi' });
    await until(() => proxy!.hanging() === 1, 'the hanging sendMessage');
    child!.kill('SIGTERM');
    await served.waitForLog('the stopping line', (l) => l.msg === 'stopping');
    child!.kill('SIGINT');
    expect(await exitWithin(served, 10_000)).toBe(0);
    const said = messages(served);
    expect(said).toContain('second signal: cancelling running turns and abandoning what is in flight now');
    expect(said.some((m) => typeof m === 'string' && m.startsWith('stopping now: abandoned'))).toBe(true);
    expect(said).not.toContain('grace period over: cancelling running turns');
    expect(said.at(-1)).toBe('stopped');
  });

  it('starts no turn for a message still waiting when the signal comes: its chat gets the apology', async () => {
    writeConfig({});
    const served = await serve(['--grace', '30']);
    model.script({ kind: 'stream', text: ['slow ', 'but ', 'complete'], chunkDelayMs: 1000 });
    telegram.pushMessage({ chatId: ALLOWED, text: 'first' });
    const second = telegram.pushMessage({ chatId: ALLOWED, text: 'second' });
    await telegram.waitFor(() => model.requests.length === 1, 30_000, 'the first model request');
    await telegram.waitFor(() => telegram.polls.some((p) => p.delivered.includes(second)), 30_000, 'the second message fetched');
    child!.kill('SIGTERM');
    expect(await exitWithin(served, 30_000)).toBe(0);
    expect(telegram.sent).toEqual([
      { chatId: ALLOWED, text: 'slow but complete' },
      { chatId: ALLOWED, text: APOLOGY },
    ]);
    expect(model.requests).toHaveLength(1);
    expect(served.logs().find(byMsg('not answered'))).toMatchObject({ component: 'telegram', chat: ALLOWED, update_id: second });
  });
});

describe('trellis run: signals while it disposes its plugins', () => {
  // Ignores SIGTERM and the end of its input: disposing it takes until the launcher's SIGKILL.
  const MUTE_PLUGIN = `process.on('SIGTERM', () => {});
process.stdin.resume();
process.stdin.on('end', () => {});
setInterval(() => {}, 1000);
`;

  it('ends by its own exit, not by the signal, and leaves no plugin process behind', { timeout: 90_000 }, async () => {
    const root = join(sandbox.dir, 'plugins');
    const tag = join(sandbox.dir, 'tag-mute');
    mkdirSync(root, { recursive: true });
    writeFileSync(
      config,
      messagingConfig(model, telegram, { allowed: [ALLOWED] }).replace(
        'profile = "messaging"',
        `profile = "messaging"\nallow = ["mute"]\npaths = [${JSON.stringify(root)}]`,
      ),
    );
    const served = await serve();
    // Added while run serves: a reload starts it (at start, its handshake would hold up the start).
    const staging = join(sandbox.dir, 'staging', 'mute');
    mkdirSync(staging, { recursive: true });
    writeFileSync(join(staging, 'mute.mjs'), MUTE_PLUGIN);
    writeFileSync(
      join(staging, 'plugin.toml'),
      'schema_version = 1\nid = "mute"\nname = "mute"\nversion = "1.0.0"\nkind = "toolset"\ndescription = "Never answers."\n\n' +
        `[runtime]\ntype = "process"\ncommand = "node"\nargs = ["mute.mjs", ${JSON.stringify(tag)}]\nhandshake_timeout_seconds = 600\n`,
    );
    cpSync(staging, join(root, 'mute'), { recursive: true });
    await telegram.waitFor(() => pidsMentioning(tag).length > 0, 30_000, 'the mute plugin');
    child!.kill('SIGTERM');
    await served.waitForLog('the stopped line', (l) => l.msg === 'stopped');
    // run has returned; the host now disposes its plugins (mute holds that up): signals keep coming.
    const signals = setInterval(() => {
      if (child!.exitCode === null && child!.signalCode === null) child!.kill('SIGINT');
    }, 5);
    try {
      const code = await exitWithin(served, 45_000);
      expect(child!.signalCode).toBeNull();
      expect([0, 130]).toContain(code);
    } finally {
      clearInterval(signals);
    }
    await telegram.waitFor(() => pidsMentioning(tag).length === 0, 30_000, 'no mute process left');
  });
});
