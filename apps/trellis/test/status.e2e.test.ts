import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLI, createSandbox, runCliAsync, type Sandbox } from './cliHarness.ts';
import { waitFor, writeServeFixture } from './serveFixture.ts';

let sandbox: Sandbox;
const children: ChildProcessWithoutNullStreams[] = [];

beforeEach(() => {
  sandbox = createSandbox();
  // A short, private runtime folder: the control socket's path must fit a Unix socket address.
  sandbox.env.XDG_RUNTIME_DIR = join(sandbox.dir, 'run');
  mkdirSync(sandbox.env.XDG_RUNTIME_DIR, { mode: 0o700 });
});

afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) {
      const gone = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await gone;
    }
  }
  sandbox.cleanup();
});

const controlDir = () => join(sandbox.env.XDG_RUNTIME_DIR!, 'trellis');

/** `trellis serve` over stdio with the fixture process plugin, once it says it serves. */
async function startServe(): Promise<{ child: ChildProcessWithoutNullStreams; stderr: () => string; socket: string }> {
  const { config } = writeServeFixture(sandbox);
  const child = spawn(process.execPath, [CLI, 'serve', '--config', config], { cwd: sandbox.workspace, env: sandbox.env });
  children.push(child);
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdout.resume();
  expect(await waitFor(() => stderr.includes('MCP over stdio'), 60_000), stderr).toBe(true);
  return { child, stderr: () => stderr, socket: join(controlDir(), `${child.pid}.sock`) };
}

function exited(child: ChildProcessWithoutNullStreams): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

/** Sends raw bytes on a control socket and returns the whole answer. */
function rawRequest(path: string, payload: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(path);
    let text = '';
    socket.setEncoding('utf8');
    socket.on('connect', () => socket.write(payload));
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
  });
}

/** A socket file left by a process killed with SIGKILL (so nothing removed it). */
async function leaveStaleSocket(path: string): Promise<number> {
  const child = spawn(process.execPath, [
    '-e',
    `require('node:net').createServer().listen(${JSON.stringify(path)}, () => console.log('up'))`,
  ]);
  await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
  const gone = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await gone;
  return child.pid!;
}

describe('trellis status', { timeout: 180_000 }, () => {
  it('asks a running trellis serve: pid, command, start time and its plugins with lifecycle states', async () => {
    const serve = await startServe();
    const pid = serve.child.pid!;
    expect(statSync(controlDir()).mode & 0o777).toBe(0o700);
    expect(statSync(serve.socket).isSocket()).toBe(true);
    expect(statSync(serve.socket).mode & 0o777).toBe(0o600);

    const json = await runCliAsync(sandbox, ['status', '--json']);
    expect(json.code, json.stderr).toBe(0);
    const answer = JSON.parse(json.stdout) as {
      dir: string;
      hosts: Array<{ pid: number; command: string; startedAt: string; workspace: string; plugins: Array<Record<string, unknown>> }>;
      stale: unknown[];
    };
    expect(answer.dir).toBe(controlDir());
    expect(answer.stale).toEqual([]);
    expect(answer.hosts).toHaveLength(1);
    const host = answer.hosts[0]!;
    expect(host).toMatchObject({ pid, command: 'serve' });
    expect(Date.now() - Date.parse(host.startedAt)).toBeLessThan(10 * 60_000);
    const fixture = host.plugins.find((p) => p.id === 'serve-fixture');
    expect(fixture).toMatchObject({
      id: 'serve-fixture',
      kind: 'toolset',
      state: 'enabled',
      runs: 'process',
      lifecycle: { state: 'active', restarts: 0 },
    });
    // Bundled plugins are listed too; disabled ones carry their reason and no lifecycle.
    const disabled = host.plugins.find((p) => p.state !== 'enabled');
    if (disabled !== undefined) expect(disabled.lifecycle).toBeUndefined();

    const text = await runCliAsync(sandbox, ['status']);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(`Host ${pid} (trellis serve) · started ${host.startedAt}`);
    expect(text.stdout).toMatch(/^serve-fixture\s+toolset\s+process\s+active\s+\S+\s+0\/3\s*$/m);

    const running = await runCliAsync(sandbox, ['plugins', 'list', '--running', '--json']);
    expect(running.code, running.stderr).toBe(0);
    const listed = JSON.parse(running.stdout) as {
      hosts: Array<{ pid: number; plugins: Array<{ id: string; lifecycle?: { state: string } }> }>;
    };
    expect(listed.hosts.map((h) => h.pid)).toEqual([pid]);
    expect(listed.hosts[0]!.plugins.find((p) => p.id === 'serve-fixture')?.lifecycle?.state).toBe('active');

    // Closing stdin ends the server; its socket goes with it.
    serve.child.stdin.end();
    expect(await exited(serve.child)).toBe(0);
    expect(existsSync(serve.socket)).toBe(false);
    const none = await runCliAsync(sandbox, ['status', '--json']);
    expect(none.code).toBe(1);
    expect(JSON.parse(none.stdout)).toMatchObject({ hosts: [], stale: [] });
  });

  it('a rejected reload shows in status and fails doctor until it is fixed', async () => {
    const serve = await startServe();
    const pid = serve.child.pid!;
    const config = join(sandbox.dir, 'runtime.toml');
    const manifest = join(sandbox.dir, 'plugins', 'serve-fixture', 'plugin.toml');
    const goodManifest = readFileSync(manifest, 'utf8');
    const goodConfig = readFileSync(config, 'utf8');
    const hostLine = `running trellis serve ${pid}`;

    // A manifest that no longer validates: the reload is rejected and generation 1 keeps serving.
    writeFileSync(manifest, goodManifest.replace('id = "serve-fixture"', 'id = 5'));
    expect(await waitFor(() => serve.stderr().includes('rejected; generation 1 keeps serving'), 30_000), serve.stderr()).toBe(true);
    const status = await runCliAsync(sandbox, ['status']);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/^Last reload, at \S+: reload \(watch\) rejected; generation 1 keeps serving\. Fix and save again:$/m);
    expect(status.stdout).toMatch(/^ {2}MANIFEST_INVALID {2}.*plugin\.toml/m);
    const broken = await runCliAsync(sandbox, ['doctor', '--config', config]);
    expect(broken.code, broken.stdout + broken.stderr).toBe(1);
    expect(broken.stdout).toContain(`✗ ${hostLine}: keeps serving generation 1: its last reload (watch, `);
    expect(broken.stdout).toMatch(/was rejected: MANIFEST_INVALID: .*Fix it and save again: the host applies it/);
    const json = await runCliAsync(sandbox, ['doctor', '--config', config, '--json']);
    const checks = (JSON.parse(json.stdout) as { checks: Array<{ name: string; ok: boolean }> }).checks;
    expect(checks.find((c) => c.name === hostLine)).toMatchObject({ ok: false });

    // Fixed: the files are as generation 1 was built from, so the reload changes nothing, and
    // doctor's check for the host passes.
    writeFileSync(manifest, goodManifest);
    expect(await waitFor(() => serve.stderr().includes('nothing changed; generation 1 keeps serving'), 30_000), serve.stderr()).toBe(true);
    const fixed = await runCliAsync(sandbox, ['doctor', '--config', config]);
    expect(fixed.code, fixed.stdout + fixed.stderr).toBe(0);
    expect(fixed.stdout).toMatch(new RegExp(`✓ ${hostLine}: serves generation 1; last reload unchanged at \\S+`));
    expect((await runCliAsync(sandbox, ['status'])).stdout).toMatch(
      /^Last reload, at \S+: reload \(watch\): nothing changed; generation 1 keeps serving$/m,
    );

    // A config that cannot be used: doctor stops at it (exit 2), and says the host keeps serving.
    const rejections = () => serve.stderr().split('rejected; generation 1 keeps serving').length - 1;
    writeFileSync(config, `${goodConfig}\n[runtime\n`);
    expect(await waitFor(() => rejections() === 2, 30_000), serve.stderr()).toBe(true);
    const unusable = await runCliAsync(sandbox, ['doctor', '--config', config]);
    expect(unusable.code).toBe(2);
    expect(unusable.stderr).toContain('the config cannot be used');
    expect(unusable.stderr).toContain(`✗ ${hostLine}: keeps serving generation 1: its last reload (watch, `);
    expect(unusable.stderr).toContain('TOML_SYNTAX');
    // Another workspace's doctor is not about this host.
    const elsewhere = join(sandbox.dir, 'elsewhere');
    mkdirSync(elsewhere);
    const other = await runCliAsync(sandbox, ['doctor', '--config', config, '--workspace', elsewhere]);
    expect(other.stderr).not.toContain(hostLine);

    // The config fixed with a change, the manifest broken again: the config applies, the manifest
    // is left out (the plugin keeps its last valid one), and doctor says so until it is fixed.
    writeFileSync(manifest, goodManifest.replace('id = "serve-fixture"', 'id = 5'));
    writeFileSync(config, goodConfig.replace('[runtime]\n', '[runtime]\nmax_retries = 1\n'));
    expect(await waitFor(() => serve.stderr().includes('reload (watch): generation 2 serves'), 30_000), serve.stderr()).toBe(true);
    expect(serve.stderr()).toMatch(
      /generation 2 serves .*\n {2}not applied; fix and save again:\n {2}MANIFEST_INVALID {2}plugin serve-fixture: /,
    );
    const leftOut = await runCliAsync(sandbox, ['doctor', '--config', config]);
    expect(leftOut.code, leftOut.stdout + leftOut.stderr).toBe(1);
    expect(leftOut.stdout).toContain(`✗ ${hostLine}: serves generation 2, but its last reload (watch, `);
    expect(leftOut.stdout).toMatch(/left out: MANIFEST_INVALID: plugin serve-fixture: .*Fix it and save again: the host applies it/);
  });

  it('a malformed, unknown or oversized request gets an error answer and the host keeps serving', async () => {
    const serve = await startServe();
    expect(JSON.parse(await rawRequest(serve.socket, 'not json\n'))).toEqual({
      ok: false,
      error: { code: 'CONTROL_REQUEST_INVALID', message: 'the request is not JSON; send one line: {"type":"status"}' },
    });
    expect(JSON.parse(await rawRequest(serve.socket, '{"type":"shutdown"}\n'))).toEqual({
      ok: false,
      error: { code: 'CONTROL_REQUEST_INVALID', message: 'unknown request type "shutdown"; the only one is "status"' },
    });
    expect(JSON.parse(await rawRequest(serve.socket, 'x'.repeat(200 * 1024)))).toEqual({
      ok: false,
      error: { code: 'CONTROL_REQUEST_INVALID', message: 'the request is larger than 65536 bytes' },
    });
    const answer = JSON.parse(await rawRequest(serve.socket, '{"type":"status"}\n')) as { ok: boolean; status: { pid: number } };
    expect(answer).toMatchObject({ ok: true, status: { pid: serve.child.pid } });
    expect(serve.child.exitCode).toBeNull();
  });

  it('SIGTERM: the host exits 143 and its socket is gone', async () => {
    const serve = await startServe();
    expect(existsSync(serve.socket)).toBe(true);
    serve.child.kill('SIGTERM');
    expect(await exited(serve.child)).toBe(143);
    expect(existsSync(serve.socket)).toBe(false);
  });

  it('stale sockets (a dead process, a reused pid nobody listens for) are removed and reported; live hosts still answer', async () => {
    const serve = await startServe();
    const deadPid = await leaveStaleSocket(join(controlDir(), 'placeholder.sock'));
    // Rename the dead listener's socket to its own pid, and leave another one under a live pid (this test's).
    const { renameSync } = await import('node:fs');
    renameSync(join(controlDir(), 'placeholder.sock'), join(controlDir(), `${deadPid}.sock`));
    await leaveStaleSocket(join(controlDir(), `${process.pid}.sock`));
    const result = await runCliAsync(sandbox, ['status', '--json']);
    expect(result.code, result.stderr).toBe(0);
    const answer = JSON.parse(result.stdout) as { hosts: Array<{ pid: number }>; stale: unknown[] };
    expect(answer.hosts.map((h) => h.pid)).toEqual([serve.child.pid]);
    expect(answer.stale).toEqual(
      [
        { pid: deadPid, path: join(controlDir(), `${deadPid}.sock`), removed: true, reason: `process ${deadPid} is gone` },
        {
          pid: process.pid,
          path: join(controlDir(), `${process.pid}.sock`),
          removed: true,
          reason: `nobody listens on it (process ${process.pid} is another program now)`,
        },
      ].sort((a, b) => a.pid - b.pid),
    );
    expect(readdirSync(controlDir()).sort()).toEqual([`${serve.child.pid}.sock`]);
    // The human form says so on stderr (nothing stale is left now, so leave one more).
    const again = await leaveStaleSocket(join(controlDir(), 'p.sock'));
    renameSync(join(controlDir(), 'p.sock'), join(controlDir(), `${again}.sock`));
    const text = await runCliAsync(sandbox, ['status']);
    expect(text.stderr).toContain(
      `trellis: removed a stale control socket ${join(controlDir(), `${again}.sock`)}: process ${again} is gone`,
    );
  });
});
