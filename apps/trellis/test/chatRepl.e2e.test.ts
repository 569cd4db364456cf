import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { startFakeOpenAiServer, type FakeOpenAiServer } from '@trellis/testing';
import { CLI, createSandbox, type Sandbox } from './cliHarness.ts';

// The REPL needs a real terminal: `script` (util-linux) runs it on a pseudo-terminal and relays our
// keystrokes, Ctrl-C and Ctrl-D included, through the terminal's line discipline.
beforeAll(() => {
  if (spawnSync('script', ['--version']).status !== 0) {
    const install = spawnSync('sh', ['-c', 'apt-get install -y util-linux || (apt-get update && apt-get install -y util-linux)'], {
      stdio: 'inherit',
    });
    if (install.status !== 0) throw new Error('this test needs `script` from util-linux; install it with apt-get install util-linux');
  }
});

let sandbox: Sandbox;
let server: FakeOpenAiServer;
let child: ChildProcessWithoutNullStreams | undefined;

beforeEach(async () => {
  sandbox = createSandbox();
  server = await startFakeOpenAiServer();
});
afterEach(async () => {
  if (child !== undefined && child.exitCode === null) child.kill('SIGKILL');
  await server.close();
  sandbox.cleanup();
});

it('the interactive chat streams answers, traces tools, handles /tools and /reset, cancels on Ctrl-C and exits on Ctrl-D', async () => {
  const config = join(sandbox.dir, 'runtime.toml');
  writeFileSync(
    config,
    `[plugins.entries.openrouter.config]\nbase_url = "${server.baseUrl}"\nmodel = "test/model"\n[runtime.policy]\nask = ["builtin-tools.now"]\n`,
  );
  const command = `${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} chat --config ${JSON.stringify(config)}`;
  child = spawn('script', ['-qfec', command, '/dev/null'], {
    cwd: sandbox.workspace,
    env: { ...sandbox.env, OPENROUTER_API_KEY: 'sk-e2e', TERM: 'dumb', COLUMNS: '200', LINES: '50' },
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (output += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (output += d));
  const exited = new Promise<number | null>((resolve) => child!.on('close', (code) => resolve(code)));
  const clean = () => output.replace(/\r/g, '');
  const waitFor = async (what: string | RegExp, from = 0) => {
    const deadline = Date.now() + 30_000;
    const found = () => (typeof what === 'string' ? clean().slice(from).includes(what) : what.test(clean().slice(from)));
    while (!found()) {
      if (Date.now() > deadline) throw new Error(`the REPL did not show ${String(what)}; it showed:\n${clean()}`);
      if (child!.exitCode !== null) throw new Error(`the REPL exited ${child!.exitCode}:\n${clean()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    return clean().length;
  };
  const type = (text: string) => child!.stdin.write(text);

  let mark = await waitFor('› ');
  expect(clean()).toContain('/tools lists the tools');

  type('/tools\r');
  mark = await waitFor(/builtin-tools\.echo\n[\s\S]*› /, mark);

  server.script(
    { kind: 'stream', toolCalls: [{ name: 'builtin-tools__echo', arguments: '{"message":"hi"}' }] },
    { kind: 'stream', text: ['Hi ', 'there!'] },
  );
  type('hello\r');
  mark = await waitFor(/⚙ builtin-tools\.echo \{"message":"hi"\} → ok \([\d.]+ m?s\)\nHi there!\n/, mark);

  type('/reset\r');
  mark = await waitFor('History cleared.', mark);

  // Ctrl-C cancels the running turn, not the process.
  server.script({ kind: 'stream', text: ['thinking…'], hang: true });
  type('take forever\r');
  mark = await waitFor('thinking…', mark);
  type('\x03');
  mark = await waitFor('(cancelled)', mark);

  server.script({ kind: 'stream', text: ['still alive'] });
  type('again\r');
  mark = await waitFor('still alive', mark);
  // After /reset and a cancelled turn, the model sees only the new message.
  expect(server.requests.at(-1)!.body.messages.filter((m) => m.role !== 'system')).toEqual([{ role: 'user', content: 'again' }]);

  // A tool under [runtime.policy] ask prompts in the chat; the answer is not taken as a message.
  server.script(
    { kind: 'stream', toolCalls: [{ name: 'builtin-tools__now', arguments: '{"timezone":"UTC"}' }] },
    { kind: 'stream', text: ['It is now.'] },
  );
  type('what time is it\r');
  mark = await waitFor('Allow builtin-tools.now', mark);
  type('y\r');
  mark = await waitFor(/⚙ builtin-tools\.now \{"timezone":"UTC"\} → ok[^\n]*\nIt is now\.\n/, mark);
  expect(
    server.requests
      .at(-1)!
      .body.messages.filter((m) => m.role === 'user')
      .map((m) => m.content),
  ).toEqual(['again', 'what time is it']);

  // Ctrl-C at the prompt does not exit either; Ctrl-D does.
  type('\x03');
  await waitFor('(Ctrl-D exits)', mark);
  type('\x04');
  expect(await exited).toBe(0);
});
