import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { childPidsMentioning, isAlive, pidsMentioning } from '@trellis/test-support';
import { CLI, createSandbox, type Sandbox } from './cliHarness.ts';
import { waitFor } from './serveFixture.ts';

// Ways out of a live `trellis serve` that the fault set tries: a SIGHUP while it starts, stdin
// closed while a reload waits on a plugin that never answers, a SIGTERM while it closes, a SIGKILL
// mid-reload. Each must end the host and leave no plugin process behind, nor the spawn helper
// that started the plugins of later generations.

const RELOAD_PLUGIN = join(import.meta.dirname, 'fixtures', 'reload-plugin.mjs');
// Never answers, ignores SIGTERM and end of input: only SIGKILL (or its namespace ending) stops it.
const MUTE_PLUGIN = `process.on('SIGTERM', () => {});
process.stdin.resume();
process.stdin.on('end', () => {});
setInterval(() => {}, 1000);
`;

let sandbox: Sandbox;
let server: ChildProcess | undefined;

beforeEach(() => {
  sandbox = createSandbox();
});
afterEach(() => {
  if (server?.pid !== undefined && isAlive(server.pid)) server.kill('SIGKILL');
  server = undefined;
  for (const pid of pidsMentioning(`${sandbox.dir}/tag-`)) process.kill(pid, 'SIGKILL');
  sandbox.cleanup();
});

const root = (): string => join(sandbox.dir, 'plugins');
const config = (): string => join(sandbox.dir, 'runtime.toml');
const tagOf = (id: string): string => `${sandbox.dir}/tag-${id}`;

function writeReloadPlugin(id: string): void {
  const folder = join(root(), id);
  mkdirSync(folder, { recursive: true });
  cpSync(RELOAD_PLUGIN, join(folder, 'reload-plugin.mjs'));
  writeFileSync(
    join(folder, 'plugin.toml'),
    `schema_version = 1\nid = "${id}"\nname = "${id}"\nversion = "1.0.0"\nkind = "toolset"\ndescription = "Reports its tools."\n\n` +
      `[runtime]\ntype = "process"\ncommand = "node"\nargs = ["reload-plugin.mjs", ${JSON.stringify(tagOf(id))}, "reported"]\ntimeout_seconds = 60\n`,
  );
}

/** A plugin that reports its tools (so a reload waits for its handshake) and never answers. */
function writeMutePlugin(id: string, into: string): void {
  const folder = join(into, id);
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, 'mute.mjs'), MUTE_PLUGIN);
  writeFileSync(
    join(folder, 'plugin.toml'),
    `schema_version = 1\nid = "${id}"\nname = "${id}"\nversion = "1.0.0"\nkind = "toolset"\ndescription = "Never answers."\n\n` +
      `[runtime]\ntype = "process"\ncommand = "node"\nargs = ["mute.mjs", ${JSON.stringify(tagOf(id))}]\nhandshake_timeout_seconds = 600\n`,
  );
}

function startServe(): { child: ChildProcess; stderr: () => string; stdout: () => string } {
  const child = spawn(process.execPath, [CLI, 'serve', '--config', config()], {
    cwd: sandbox.workspace,
    env: { ...sandbox.env, XDG_RUNTIME_DIR: join(sandbox.dir, 'run') },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  server = child;
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
  let stdout = '';
  child.stdout!.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
  return { child, stderr: () => stderr, stdout: () => stdout };
}

/** Writes one JSON-RPC message to serve's stdin (MCP over stdio: a line each). */
function send(child: ChildProcess, message: Record<string, unknown>): void {
  child.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
}

const exited = (child: ChildProcess): boolean => child.exitCode !== null || child.signalCode !== null;

/** Starts serve with alpha, then drops a mute plugin into the root: the reload waits for its handshake. */
async function serveWithReloadWaitingOnMute(): Promise<{
  child: ChildProcess;
  stderr: () => string;
  stdout: () => string;
  helper: number;
}> {
  writeReloadPlugin('alpha');
  writeFileSync(config(), `[plugins]\nallow = ["alpha", "mute"]\npaths = [${JSON.stringify(root())}]\n`);
  const started = startServe();
  expect(await waitFor(() => started.stderr().includes('MCP over stdio'), 60_000), started.stderr()).toBe(true);
  const staging = join(sandbox.dir, 'staging');
  writeMutePlugin('mute', staging);
  cpSync(join(staging, 'mute'), join(root(), 'mute'), { recursive: true });
  expect(await waitFor(() => pidsMentioning(tagOf('mute')).length >= 2, 30_000)).toBe(true);
  // The reload started mute through the spawn helper, serve's one child of its own.
  const helpers = childPidsMentioning(started.child.pid!, 'trellis-spawn-helper');
  expect(helpers).toHaveLength(1);
  expect(pidsMentioning(tagOf('mute')).some((pid) => parentOf(pid) === helpers[0])).toBe(true);
  return { ...started, helper: helpers[0]! };
}

function parentOf(pid: number): number | undefined {
  try {
    // /proc/<pid>/stat: "pid (comm) state ppid …"; comm may hold spaces, so read after the last ')'.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

describe('live serve: every way out ends it and leaves nothing behind', () => {
  it('a SIGHUP while serve starts does not end it; it reloads once it serves', { timeout: 90_000 }, async () => {
    writeReloadPlugin('slow');
    // slow answers its handshake after 4 s: start-up waits for it, so the SIGHUP lands mid-start.
    writeFileSync(
      config(),
      `[plugins]\nallow = ["slow"]\npaths = [${JSON.stringify(root())}]\n\n[plugins.entries.slow]\nconfig = { handshake_delay_ms = 4000 }\n`,
    );
    const { child, stderr } = startServe();
    expect(await waitFor(() => pidsMentioning(tagOf('slow')).length > 0, 60_000)).toBe(true);
    expect(stderr()).not.toContain('MCP over stdio');
    child.kill('SIGHUP');
    expect(await waitFor(() => stderr().includes('MCP over stdio') || exited(child), 60_000)).toBe(true);
    expect(child.signalCode).toBeNull();
    expect(exited(child)).toBe(false);
    expect(await waitFor(() => /reload \(signal\)/.test(stderr()), 30_000), stderr()).toBe(true);

    child.stdin!.end();
    expect(await waitFor(() => exited(child), 60_000)).toBe(true);
    expect(child.exitCode).toBe(0);
    expect(await waitFor(() => pidsMentioning(tagOf('slow')).length === 0)).toBe(true);
  });

  it(
    'stdin closed while a reload waits on a plugin that never answers: serve ends within its shutdown limit',
    { timeout: 90_000 },
    async () => {
      const { child, helper } = await serveWithReloadWaitingOnMute();
      const closedAt = Date.now();
      child.stdin!.end();
      // The limit is 10 s; a generous bound still far below the plugin's 600 s handshake.
      expect(await waitFor(() => exited(child), 45_000)).toBe(true);
      expect(Date.now() - closedAt).toBeLessThan(45_000);
      expect(await waitFor(() => pidsMentioning(`${sandbox.dir}/tag-`).length === 0)).toBe(true);
      expect(await waitFor(() => !isAlive(helper))).toBe(true);
    },
  );

  it('a SIGTERM while serve closes is still a clean exit, not a death that orphans plugins', { timeout: 90_000 }, async () => {
    const { child, helper, stdout } = await serveWithReloadWaitingOnMute();
    // A call in flight keeps serve closing for up to its 10 s limit (closing waits for calls), so
    // the SIGTERM lands mid-close however quickly the rest of the close goes.
    send(child, {
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    });
    expect(await waitFor(() => stdout().includes('"id":1'), 30_000)).toBe(true);
    send(child, { method: 'notifications/initialized' });
    send(child, { id: 2, method: 'tools/call', params: { name: 'alpha__where', arguments: { ms: 60_000 } } });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(stdout()).not.toContain('"id":2'); // still in flight
    child.stdin!.end();
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(exited(child)).toBe(false);
    child.kill('SIGTERM');
    expect(await waitFor(() => exited(child), 45_000)).toBe(true);
    // It ends by its own exit (the close it was doing, or the trap's 143), not by the signal.
    expect(child.signalCode).toBeNull();
    expect([0, 143]).toContain(child.exitCode);
    expect(await waitFor(() => pidsMentioning(`${sandbox.dir}/tag-`).length === 0)).toBe(true);
    expect(await waitFor(() => !isAlive(helper))).toBe(true);
  });

  it('SIGHUPs while serve closes do not end it by the signal: it exits 0', { timeout: 90_000 }, async () => {
    writeReloadPlugin('alpha');
    writeFileSync(config(), `[plugins]\nallow = ["alpha"]\npaths = [${JSON.stringify(root())}]\n`);
    const { child, stderr } = startServe();
    expect(await waitFor(() => stderr().includes('MCP over stdio'), 60_000), stderr()).toBe(true);
    child.stdin!.end();
    // A SIGHUP every few ms from the end of stdin to the exit, the last handles' close included.
    const hangups = setInterval(() => {
      if (!exited(child)) child.kill('SIGHUP');
    }, 3);
    try {
      expect(await waitFor(() => exited(child), 45_000)).toBe(true);
    } finally {
      clearInterval(hangups);
    }
    expect(child.signalCode).toBeNull();
    expect(child.exitCode).toBe(0);
  });

  it('serve SIGKILLed mid-reload leaves no plugin process behind', { timeout: 90_000 }, async () => {
    const { child, helper } = await serveWithReloadWaitingOnMute();
    child.kill('SIGKILL');
    expect(await waitFor(() => exited(child), 30_000)).toBe(true);
    expect(await waitFor(() => pidsMentioning(`${sandbox.dir}/tag-`).length === 0, 15_000)).toBe(true);
    expect(await waitFor(() => !isAlive(helper), 15_000)).toBe(true);
  });
});
