import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { startFakeBotApiServer, startFakeOpenAiServer, type FakeBotApiServer, type FakeOpenAiServer } from '@trellis/testing';
import { createSandbox, runCliAsync, type Sandbox } from './cliHarness.ts';
import { messagingConfig, startRun } from './runFixture.ts';

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
  writeFileSync(config, messagingConfig(model, telegram));
  const run = await startRun(sandbox, config, TOKEN);
  const proc = run.child;
  child = proc;
  const socket = join(sandbox.env.XDG_RUNTIME_DIR!, 'trellis', `${proc.pid}.sock`);
  // The serving line names the socket.
  const serving = run.logs().find((l) => l.msg === 'serving');
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
  expect(await run.exited).toBe(0);
  expect(existsSync(socket)).toBe(false);
});
