import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { isAlive, pidsMentioning } from '@trellis/test-support';
import { startFakeBotApiServer, startFakeOpenAiServer, type FakeOpenAiServer } from '@trellis/testing';
import { CLI, createSandbox, type Sandbox } from './cliHarness.ts';
import { messagingConfig } from './runFixture.ts';

// The interactive chat when its terminal goes away. A small Python driver owns the pseudo-terminal:
// it runs `trellis chat` as the session leader on it, relays our input and its output, and when our
// input ends it closes the master side, as a terminal window closing does (the kernel then sends
// SIGHUP, reads end, and the terminal's ioctls fail with EIO). Then it reports how the process ended.
const DRIVER = `
import json, os, pty, select, signal, struct, sys, time, fcntl, termios
stderr_file, argv = sys.argv[1], sys.argv[2:]
def report(**fields):
    sys.stderr.write(json.dumps(fields) + "\\n")
    sys.stderr.flush()
pid, master = pty.fork()
if pid == 0:
    fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
    if stderr_file != "-":
        os.dup2(os.open(stderr_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), 2)
    os.execvp(argv[0], argv)
report(pid=pid)
ours = sys.stdin.fileno()
hung_up = False
while True:
    ready, _, _ = select.select([master, ours], [], [])
    if master in ready:
        try:
            data = os.read(master, 65536)
        except OSError:
            data = b""
        if not data:
            break
        os.write(1, data)
    if ours in ready:
        data = os.read(ours, 65536)
        if not data:
            hung_up = True
            break
        os.write(master, data)
start = time.monotonic()
os.close(master)
stuck = False
while True:
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        break
    if time.monotonic() - start > 20:
        stuck = True
        os.kill(pid, signal.SIGKILL)
        done, status = os.waitpid(pid, 0)
        break
    time.sleep(0.01)
report(
    hungUp=hung_up,
    stuck=stuck,
    code=os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
    signal=signal.Signals(os.WTERMSIG(status)).name if os.WIFSIGNALED(status) else None,
    ms=round((time.monotonic() - start) * 1000),
)
`;

interface Ended {
  readonly hungUp: boolean;
  readonly code: number | null;
  readonly signal: string | null;
  readonly ms: number;
  /** Still running 20 s after the hang-up (then SIGKILLed). */
  readonly stuck: boolean;
}

let sandbox: Sandbox;
let server: FakeOpenAiServer;
let driver: ChildProcessWithoutNullStreams | undefined;
let pidFile: string;

beforeEach(async () => {
  sandbox = createSandbox();
  server = await startFakeOpenAiServer();
  pidFile = join(sandbox.dir, 'pids.json');
});
afterEach(async () => {
  if (driver !== undefined && driver.exitCode === null) driver.kill('SIGKILL');
  for (const pid of pidsMentioning(sandbox.dir)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
  await server.close();
  sandbox.cleanup();
});

/** A config for the fake model, with the pid plugin (see exitPaths.e2e.test.ts) whose `hang` never answers. */
function writeConfig(extra = ''): string {
  const plugins = join(sandbox.dir, 'plugins');
  const dir = join(plugins, 'pidplug');
  mkdirSync(dir, { recursive: true });
  cpSync(join(import.meta.dirname, 'fixtures', 'pid-plugin.mjs'), join(dir, 'pid-plugin.mjs'));
  writeFileSync(
    join(dir, 'plugin.toml'),
    `schema_version = 1\nid = "pidplug"\nname = "Pid plugin"\nversion = "1.0.0"\nkind = "toolset"\ndescription = "Writes its pids and hangs."\n\n` +
      `[runtime]\ntype = "process"\ncommand = "node"\nargs = ${JSON.stringify(['pid-plugin.mjs', pidFile])}\ntimeout_seconds = 120\n\n` +
      `[[tools]]\nname = "hang"\ndescription = "Start a grandchild, write the pids, never answer."\ninput_schema = { type = "object" }\n`,
  );
  const config = join(sandbox.dir, 'runtime.toml');
  writeFileSync(
    config,
    `[plugins]\nallow = ["pidplug"]\npaths = [${JSON.stringify(plugins)}]\n` +
      `[plugins.entries.openrouter.config]\nbase_url = "${server.baseUrl}"\nmodel = "test/model"\n${extra}`,
  );
  return config;
}

/** `trellis chat` on a terminal of its own; stderr on that terminal too, or in `stderrFile`. */
function startChat(options: {
  readonly term: string;
  readonly config: string;
  readonly stderrFile?: string;
  readonly signalled?: boolean;
  /** Another command than the interactive chat (a one-shot command on the same terminal). */
  readonly args?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
}) {
  // `signalled: false`: a shell that ignores SIGHUP leads the session, so only it gets the kernel's
  // SIGHUP; the chat sees only its input end and the terminal fail (the shell passes its exit code on).
  const shell = options.signalled === false ? ['sh', '-c', 'trap "" HUP; "$0" "$@"; exit $?'] : [];
  const child = spawn(
    'python3',
    ['-c', DRIVER, options.stderrFile ?? '-', ...shell, process.execPath, CLI, ...(options.args ?? ['chat']), '--config', options.config],
    { cwd: sandbox.workspace, env: { ...sandbox.env, OPENROUTER_API_KEY: 'sk-e2e', TERM: options.term, ...options.env } },
  );
  driver = child;
  let output = '';
  let reports = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (output += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (reports += d));
  const reported = () =>
    reports
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  const ended = new Promise<Ended>((resolve, reject) =>
    child.on('close', () => {
      const last = reported().find((r) => 'code' in r);
      if (last === undefined) reject(new Error(`the pty driver failed:\n${reports}`));
      else resolve(last as unknown as Ended);
    }),
  );
  ended.catch(() => undefined); // a test that failed before the end does not await it
  // Escape sequences (a real TERM redraws the line) and carriage returns are not what a person reads.
  // eslint-disable-next-line no-control-regex
  const clean = () => output.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r/g, '');
  const waitFor = async (what: string | RegExp, from = 0) => {
    const deadline = Date.now() + 20_000;
    const found = () => (typeof what === 'string' ? clean().slice(from).includes(what) : what.test(clean().slice(from)));
    while (!found()) {
      if (Date.now() > deadline) throw new Error(`the chat did not show ${String(what)}; it showed:\n${clean()}`);
      if (child.exitCode !== null) throw new Error(`the chat ended early (${JSON.stringify(await ended)}):\n${clean()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    return clean().length;
  };
  return {
    waitFor,
    clean,
    type: (text: string) => child.stdin.write(text),
    /** Closes the terminal. */
    hangUp: () => child.stdin.end(),
    ended,
    pid: () => reported().find((r) => typeof r.pid === 'number')?.pid as number,
  };
}

/**
 * The pids of the pid plugin (behind its sandbox's launcher) and of the grandchild it starts, found
 * by the pid file's path, once the grandchild runs: the tool call is under way then.
 */
async function pluginPids(shown: () => string): Promise<number[]> {
  const grandchild = () => pidsMentioning(pidFile).some((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('\0-e\0'));
  const deadline = Date.now() + 20_000;
  while (!grandchild()) {
    if (Date.now() > deadline) throw new Error(`the plugin did not start its grandchild:\n${shown()}`);
    await new Promise((r) => setTimeout(r, 25));
  }
  return pidsMentioning(pidFile);
}

/** The chat ended by itself with 129 within `limitMs` of the hang-up: no abort, no internal error (1). */
function expectEndedByHangup(ended: Ended, limitMs = 5_000): void {
  expect(ended).toEqual({ hungUp: true, stuck: false, code: 129, signal: null, ms: expect.any(Number) });
  expect(ended.ms).toBeLessThan(limitMs);
}

it('a hang-up at the prompt ends the chat with 129, without an internal error or an abort', async () => {
  const chat = startChat({ term: 'xterm-256color', config: writeConfig() });
  await chat.waitFor('› ');
  chat.hangUp();
  expectEndedByHangup(await chat.ended);
});

it('a hang-up while the answer streams cancels the turn; nothing reaches stderr', async () => {
  const stderrFile = join(sandbox.dir, 'stderr.txt');
  const chat = startChat({ term: 'dumb', config: writeConfig(), stderrFile });
  const mark = await chat.waitFor('› ');
  server.script({ kind: 'stream', text: ['thinking…'], hang: true });
  chat.type('take forever\r');
  await chat.waitFor('thinking…', mark);
  chat.hangUp();
  expectEndedByHangup(await chat.ended);
  expect(readFileSync(stderrFile, 'utf8')).toBe('');
});

for (const signalled of [true, false]) {
  it(`a hang-up during a tool call stops the plugin process and its grandchild${signalled ? '' : ' (no SIGHUP: input ends, the terminal fails with EIO)'}`, async () => {
    const stderrFile = join(sandbox.dir, 'stderr.txt');
    const chat = startChat({ term: 'xterm-256color', config: writeConfig(), stderrFile, signalled });
    await chat.waitFor('› ');
    server.script({ kind: 'stream', toolCalls: [{ name: 'pidplug__hang', arguments: '{}' }] });
    chat.type('hang\r');
    const pids = await pluginPids(chat.clean);
    chat.hangUp();
    expectEndedByHangup(await chat.ended, 10_000);
    expect(readFileSync(stderrFile, 'utf8')).toBe('');
    // Orphans are reparented and reaped: give that a moment.
    const gone = Date.now() + 10_000;
    while (pids.some(isAlive) && Date.now() < gone) await new Promise((r) => setTimeout(r, 25));
    expect(pids.filter(isAlive)).toEqual([]);
  });
}

it('a hang-up while an approval question waits: the answer is no and the chat ends with 129', async () => {
  // On the terminal: approvals are asked only when stderr is a terminal too.
  const chat = startChat({ term: 'dumb', config: writeConfig('[runtime.policy]\nask = ["builtin-tools.now"]\n') });
  const mark = await chat.waitFor('› ');
  server.script({ kind: 'stream', toolCalls: [{ name: 'builtin-tools__now', arguments: '{}' }] });
  chat.type('what time is it\r');
  await chat.waitFor('Allow builtin-tools.now', mark);
  chat.hangUp();
  expectEndedByHangup(await chat.ended);
  expect(server.requests).toHaveLength(1);
});

it('SIGHUP with the terminal still there ends the chat with 129 as well', async () => {
  const chat = startChat({ term: 'xterm-256color', config: writeConfig() });
  await chat.waitFor('› ');
  process.kill(chat.pid(), 'SIGHUP');
  expect(await chat.ended).toEqual({ hungUp: false, stuck: false, code: 129, signal: null, ms: expect.any(Number) });
});

it('a hang-up ends a one-shot command on the terminal with 129 too, its plugin gone, without an abort', async () => {
  const chat = startChat({ term: 'xterm-256color', config: writeConfig(), args: ['tools', 'call', 'pidplug.hang', '--args', '{}'] });
  const pids = await pluginPids(chat.clean);
  chat.hangUp();
  expectEndedByHangup(await chat.ended, 10_000);
  const gone = Date.now() + 10_000;
  while (pids.some(isAlive) && Date.now() < gone) await new Promise((r) => setTimeout(r, 25));
  expect(pids.filter(isAlive)).toEqual([]);
});

it('trellis run outlives its terminal (a hang-up reloads it), then a SIGTERM stops it cleanly (0), not an abort', async () => {
  const telegram = await startFakeBotApiServer({ token: '4242:hangup-token' });
  try {
    const config = join(sandbox.dir, 'run.toml');
    writeFileSync(config, messagingConfig(server, telegram, { allowed: [7] }));
    // Its log stays on the terminal: writing there after the hang-up fails (EIO), which must not end it.
    const run = startChat({ term: 'xterm-256color', config, args: ['run'], env: { TELEGRAM_BOT_TOKEN: '4242:hangup-token' } });
    await run.waitFor('"msg":"serving"');
    run.hangUp();
    // A live host takes the hang-up's SIGHUP as "reload": it serves on, without its terminal.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    process.kill(run.pid(), 'SIGTERM');
    expect(await run.ended).toMatchObject({ hungUp: true, stuck: false, code: 0, signal: null });
  } finally {
    await telegram.close();
  }
});
