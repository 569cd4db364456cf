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

/** `trellis chat` on a terminal (`script`), with `extra` config; `TERM=dumb` is what readline does least with. */
function startRepl(options: { readonly term?: string; readonly extra?: string } = {}) {
  const config = join(sandbox.dir, 'runtime.toml');
  writeFileSync(
    config,
    `[plugins.entries.openrouter.config]\nbase_url = "${server.baseUrl}"\nmodel = "test/model"\n${options.extra ?? ''}`,
  );
  const command = `${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} chat --config ${JSON.stringify(config)}`;
  const started = spawn('script', ['-qfec', command, '/dev/null'], {
    cwd: sandbox.workspace,
    env: { ...sandbox.env, OPENROUTER_API_KEY: 'sk-e2e', TERM: options.term ?? 'dumb', COLUMNS: '200', LINES: '50' },
  });
  child = started;
  let output = '';
  started.stdout.setEncoding('utf8').on('data', (d: string) => (output += d));
  started.stderr.setEncoding('utf8').on('data', (d: string) => (output += d));
  const exited = new Promise<number | null>((resolve) => started.on('close', (code) => resolve(code)));
  // Escape sequences (a real TERM redraws the line) and carriage returns are not what a person reads.
  // eslint-disable-next-line no-control-regex
  const clean = () => output.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r/g, '');
  const waitFor = async (what: string | RegExp, from = 0) => {
    const deadline = Date.now() + 20_000;
    const found = () => (typeof what === 'string' ? clean().slice(from).includes(what) : what.test(clean().slice(from)));
    while (!found()) {
      if (Date.now() > deadline) throw new Error(`the REPL did not show ${String(what)}; it showed:\n${clean()}`);
      if (started.exitCode !== null) throw new Error(`the REPL exited ${started.exitCode}:\n${clean()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    return clean().length;
  };
  return { waitFor, exited, clean, type: (text: string) => started.stdin.write(text) };
}

/** The user messages of the model's last request. */
const lastUserMessages = () =>
  server.requests
    .at(-1)!
    .body.messages.filter((m) => m.role === 'user')
    .map((m) => m.content);

it('the interactive chat streams answers, traces tools, handles /tools and /reset, cancels on Ctrl-C and exits on Ctrl-D', async () => {
  const { waitFor, exited, clean, type } = startRepl({ extra: '[runtime.policy]\nask = ["builtin-tools.now"]\n' });
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
  expect(lastUserMessages()).toEqual(['again', 'what time is it']);

  // Ctrl-C at the prompt does not exit either; Ctrl-D does.
  type('\x03');
  await waitFor('(Ctrl-D exits)', mark);
  type('\x04');
  expect(await exited).toBe(0);
});

for (const term of ['dumb', 'xterm-256color']) {
  it(`TERM=${term}: Ctrl-C at the prompt drops what was typed, and cancels a running answer`, async () => {
    const { waitFor, exited, type } = startRepl({ term });
    let mark = await waitFor('› ');
    // Left twice: the cursor mid-line (readline ignores the arrow keys when TERM=dumb).
    type('half a thought\x1b[D\x1b[D');
    type('\x03');
    mark = await waitFor('(Ctrl-D exits)', mark);
    server.script({ kind: 'stream', text: ['fresh'] });
    type('again\r');
    mark = await waitFor('fresh', mark);
    expect(lastUserMessages()).toEqual(['again']);

    server.script({ kind: 'stream', text: ['thinking…'], hang: true });
    type('take forever\r');
    mark = await waitFor('thinking…', mark);
    type('\x03');
    await waitFor(/\(cancelled\)\n› /, mark);
    type('\x04');
    expect(await exited).toBe(0);
  });

  it(`TERM=${term}: Ctrl-D while an answer streams cancels it and exits 0`, async () => {
    const { waitFor, exited, type } = startRepl({ term });
    let mark = await waitFor('› ');
    server.script({ kind: 'stream', text: ['thinking…'], hang: true });
    type('take forever\r');
    mark = await waitFor('thinking…', mark);
    type('\x04');
    await waitFor('(cancelled)', mark);
    expect(await exited).toBe(0);
    expect(server.requests).toHaveLength(1);
  });
}

it('Ctrl-D at an approval question: the answer is no, the turn is cancelled and the chat exits 0', async () => {
  const { waitFor, exited, type } = startRepl({ extra: '[runtime.policy]\nask = ["builtin-tools.now"]\n' });
  let mark = await waitFor('› ');
  server.script({ kind: 'stream', toolCalls: [{ name: 'builtin-tools__now', arguments: '{}' }] });
  type('what time is it\r');
  mark = await waitFor('Allow builtin-tools.now', mark);
  type('\x04');
  await waitFor('(cancelled)', mark);
  expect(await exited).toBe(0);
  // Cancelled, not carried on with the refusal: the model is not asked again.
  expect(server.requests).toHaveLength(1);
});

it('Ctrl-C at an approval question cancels the turn; the next line is a message again, not the answer', async () => {
  const { waitFor, exited, type } = startRepl({ extra: '[runtime.policy]\nask = ["builtin-tools.now"]\n' });
  let mark = await waitFor('› ');
  server.script({ kind: 'stream', toolCalls: [{ name: 'builtin-tools__now', arguments: '{}' }] });
  type('what time is it\r');
  await waitFor('Allow builtin-tools.now', mark);
  type('\x03');
  // The question's line ends when it is withdrawn: the trace line comes below it.
  mark = await waitFor(/Allow builtin-tools\.now\? \[y\/N\] \n {2}⚙ builtin-tools\.now \{\} → [A-Z_]+ [^\n]*\n\(cancelled\)\n› /, mark);
  server.script({ kind: 'stream', text: ['heard you'] });
  type('y\r');
  await waitFor('heard you', mark);
  expect(lastUserMessages()).toEqual(['y']);
  type('\x04');
  expect(await exited).toBe(0);
});

it('two calls in one step that need approval are asked one after the other', async () => {
  const { waitFor, exited, type } = startRepl({ extra: '[runtime.policy]\nask = ["builtin-tools.now"]\n' });
  let mark = await waitFor('› ');
  server.script(
    {
      kind: 'stream',
      toolCalls: [
        { name: 'builtin-tools__now', arguments: '{"timezone":"UTC"}' },
        { name: 'builtin-tools__now', arguments: '{"timezone":"Asia/Tokyo"}' },
      ],
    },
    { kind: 'stream', text: ['Both.'] },
  );
  type('what time is it here and there\r');
  mark = await waitFor('Allow builtin-tools.now', mark);
  type('y\r');
  await waitFor('Allow builtin-tools.now', mark);
  type('n\r');
  // The first call's trace line waits until the second question is answered, not on its line.
  await waitFor(
    /\[y\/N\] n\n {2}⚙ builtin-tools\.now \{"timezone":"UTC"\} → ok [^\n]*\n {2}⚙ builtin-tools\.now \{"timezone":"Asia\/Tokyo"\} → APPROVAL_DENIED [^\n]*\nBoth\.\n/,
    mark,
  );
  const results = server.requests
    .at(-1)!
    .body.messages.filter((m) => m.role === 'tool')
    .map((m) => String(m.content));
  expect(results.map((r) => r.includes('APPROVAL_DENIED'))).toEqual([false, true]);
  type('\x04');
  expect(await exited).toBe(0);
});
