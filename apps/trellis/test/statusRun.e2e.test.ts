import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { startFakeBotApiServer, startFakeOpenAiServer, type FakeBotApiServer, type FakeOpenAiServer } from '@trellis/testing';
import { CLI, createSandbox, runCliAsync, type Sandbox } from './cliHarness.ts';

const TOKEN = '4242:e2e-token';

let sandbox: Sandbox;
let model: FakeOpenAiServer;
let telegram: FakeBotApiServer;
let child: ChildProcess | undefined;

beforeEach(async () => {
  sandbox = createSandbox();
  sandbox.env.XDG_RUNTIME_DIR = join(sandbox.dir, 'run');
  mkdirSync(sandbox.env.XDG_RUNTIME_DIR, { mode: 0o700 });
  model = await startFakeOpenAiServer();
  telegram = await startFakeBotApiServer({ token: TOKEN });
});

afterEach(async () => {
  if (child !== undefined && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  child = undefined;
  await model.close();
  await telegram.close();
  sandbox.cleanup();
});

it('trellis status sees a running trellis run; the socket is gone after SIGTERM', { timeout: 120_000 }, async () => {
  const config = join(sandbox.dir, 'runtime.toml');
  writeFileSync(
    config,
    [
      '[plugins]',
      'profile = "messaging"',
      '[plugins.entries.openrouter.config]',
      `base_url = "${model.baseUrl}"`,
      'model = "test/model"',
      '[plugins.entries.telegram.config]',
      `api_root = "${telegram.apiRoot}"`,
      'allowed_chat_ids = [7]',
      'poll_timeout_seconds = 2',
      '',
    ].join('\n'),
  );
  const proc = spawn(process.execPath, [CLI, 'run', '--config', config], {
    cwd: sandbox.workspace,
    env: { ...sandbox.env, OPENROUTER_API_KEY: 'sk-e2e', TELEGRAM_BOT_TOKEN: TOKEN },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child = proc;
  let stderr = '';
  proc.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  proc.stdout!.resume();
  const exited = new Promise<number | null>((resolve) => proc.on('close', (code) => resolve(code)));
  const socket = join(sandbox.env.XDG_RUNTIME_DIR!, 'trellis', `${proc.pid}.sock`);
  const deadline = Date.now() + 60_000;
  while (!stderr.includes('"msg":"serving"')) {
    if (proc.exitCode !== null || Date.now() > deadline) throw new Error(`trellis run did not start serving: ${stderr}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  // The serving line names the socket.
  const serving = stderr
    .split('\n')
    .filter((l) => l.includes('"msg":"serving"'))
    .map((l) => JSON.parse(l) as Record<string, unknown>)[0];
  expect(serving).toMatchObject({ control: socket });
  expect(statSync(socket).mode & 0o777).toBe(0o600);

  const result = await runCliAsync(sandbox, ['status', '--json']);
  expect(result.code, result.stderr).toBe(0);
  const hosts = (
    JSON.parse(result.stdout) as {
      hosts: Array<{ pid: number; command: string; plugins: Array<{ id: string; state: string; runs: string }> }>;
    }
  ).hosts;
  expect(hosts.map((h) => [h.pid, h.command])).toEqual([[proc.pid, 'run']]);
  expect(hosts[0]!.plugins.find((p) => p.id === 'telegram')).toMatchObject({ state: 'enabled', runs: 'bundled' });

  proc.kill('SIGTERM');
  expect(await exited).toBe(0);
  expect(existsSync(socket)).toBe(false);
});
