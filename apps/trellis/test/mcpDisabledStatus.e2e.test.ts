import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { pidsMentioning } from '@trellis/test-support';
import { CLI, createSandbox, runCliAsync, type Sandbox } from './cliHarness.ts';
import { waitFor } from './serveFixture.ts';

// A bridged server that fails on every start ends `disabled` past max_restarts in a running
// `trellis serve`, `trellis status` says why and how to bring it back, and SIGHUP (a reload with
// the same config) brings it back once it is fixed. The built binary, a real SDK server.

const SERVER = fileURLToPath(new URL('./fixtures/mcpSessionServer.mjs', import.meta.url));

let sandbox: Sandbox;
let serve: ChildProcessWithoutNullStreams | undefined;

beforeEach(() => {
  sandbox = createSandbox();
  // A short, private runtime folder: the control socket's path must fit a Unix socket address.
  sandbox.env.XDG_RUNTIME_DIR = join(sandbox.dir, 'run');
  mkdirSync(sandbox.env.XDG_RUNTIME_DIR, { mode: 0o700 });
});

afterEach(async () => {
  if (serve !== undefined && serve.exitCode === null && serve.signalCode === null) {
    const gone = new Promise((resolve) => serve!.once('exit', resolve));
    serve.kill('SIGTERM');
    await gone;
  }
  serve = undefined;
  expect(await waitFor(() => pidsMentioning(sandbox.dir).length === 0, 10_000)).toBe(true);
  sandbox.cleanup();
});

interface Part {
  name: string;
  state: string;
  restarts: number;
  maxRestarts?: number;
  lastError?: string;
}

async function flakyPart(): Promise<Part | undefined> {
  const result = await runCliAsync(sandbox, ['status', '--json']);
  const hosts = (JSON.parse(result.stdout) as { hosts: Array<{ plugins: Array<{ id: string; lifecycle?: { parts?: Part[] } }> }> }).hosts;
  return hosts[0]?.plugins.find((plugin) => plugin.id === 'mcp')?.lifecycle?.parts?.find((part) => part.name === 'flaky');
}

async function eventually(check: () => Promise<boolean>, ms = 60_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return check();
}

describe('a bridged server given up in a running host', { timeout: 180_000 }, () => {
  it('shows as disabled with the reason in trellis status, and SIGHUP brings it back once fixed', async () => {
    const tag = join(sandbox.dir, 'flaky');
    writeFileSync(`${tag}.crash`, '');
    const config = join(sandbox.dir, 'runtime.toml');
    writeFileSync(
      config,
      `[plugins.entries.mcp]\nenabled = true\n\n[[plugins.entries.mcp.config.servers]]\nname = "flaky"\n` +
        `command = ${JSON.stringify(process.execPath)}\nargs = [${JSON.stringify(SERVER)}, ${JSON.stringify(tag)}]\nmax_restarts = 1\n`,
    );
    serve = spawn(process.execPath, [CLI, 'serve', '--config', config], { cwd: sandbox.workspace, env: sandbox.env });
    let stderr = '';
    serve.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    serve.stdout.resume();
    expect(await waitFor(() => stderr.includes('MCP over stdio'), 60_000), stderr).toBe(true);

    expect(await eventually(async () => (await flakyPart())?.state === 'disabled'), stderr).toBe(true);
    const disabled = (await flakyPart())!;
    expect(disabled).toMatchObject({ state: 'disabled', restarts: 1, maxRestarts: 1 });
    expect(disabled.lastError).toMatch(
      /^failed to start: .*; gave up after 1 reconnect\(s\) \(max_restarts = 1\); fix the server, then change its \[\[plugins\.entries\.mcp\.config\.servers\]\] entry or reload the host \(SIGHUP to trellis serve or run\) to try again$/,
    );
    const table = await runCliAsync(sandbox, ['status']);
    const row = table.stdout.split('\n').find((line) => line.trimStart().startsWith('mcp/flaky'));
    expect(row).toMatch(/^ {2}mcp\/flaky\s+disabled\s+\S+\s+1\/1\s+failed to start: .*gave up after 1 reconnect\(s\)/);

    // Fixed; SIGHUP reloads the same config and gives the server a fresh start.
    rmSync(`${tag}.crash`);
    serve.kill('SIGHUP');
    expect(await eventually(async () => (await flakyPart())?.state === 'active'), stderr).toBe(true);
    expect(await flakyPart()).toMatchObject({ state: 'active', restarts: 0 });
    expect(pidsMentioning(`${tag}\0`).length).toBeGreaterThan(0);
  });
});
