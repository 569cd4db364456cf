import type { AgentEvent, AgentSession, TurnResult } from '@trellis/agent';
import type { Interface } from 'node:readline';
import { createAssemblyAgent } from '../agentHost.ts';
import type { Assembly } from '../assemble.ts';
import { EXIT, FailedError, UsageError } from '../errors.ts';
import type { CommandIO } from '../io.ts';
import { toJson } from '../io.ts';
import type { CommandLine } from '../parseCommandLine.ts';
import { EXIT_SIGNALS } from '../shutdown.ts';

/** The system prompt `trellis chat` and `trellis run` give the model. */
export const CHAT_SYSTEM_PROMPT =
  'You are a helpful assistant running inside Trellis, a tool host. Use the tools offered when they help, ' +
  'read their results and errors carefully, and answer concisely. If a tool fails, say what failed.';

/** Arguments as one short line: JSON, cut to `max` characters. */
export function shortArgs(args: unknown, max = 60): string {
  const text = typeof args === 'string' ? args : (JSON.stringify(args) ?? '');
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function formatMs(ms: number): string {
  return ms < 1000 ? `${ms.toFixed(ms < 10 ? 1 : 0)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** Writes a turn's events as a person reads them: text to `out` as it streams, one trace line per tool call to `trace`. */
function createPrinter(out: (text: string) => void, trace: (text: string) => void) {
  let atLineStart = true;
  const args = new Map<string, unknown>();
  return {
    event(event: AgentEvent) {
      if (event.type === 'text') {
        out(event.delta);
        atLineStart = event.delta.endsWith('\n');
      } else if (event.type === 'tool_started') {
        args.set(event.callId, event.args);
      } else if (event.type === 'tool_ended') {
        if (!atLineStart) out('\n');
        atLineStart = true;
        const outcome = event.ok ? 'ok' : `${event.code ?? 'failed'}`;
        trace(`  ⚙ ${event.tool} ${shortArgs(args.get(event.callId))} → ${outcome} (${formatMs(event.durationMs)})\n`);
        args.delete(event.callId);
      } else if (event.type === 'tools_loaded') {
        trace(`  ⚙ loaded ${event.tools.join(', ')}\n`);
      }
    },
    endTurn() {
      if (!atLineStart) out('\n');
      atLineStart = true;
    },
  };
}

/** What a turn that did not simply finish means for the user, or undefined when it did. */
function problemOf(result: TurnResult, maxSteps: number): string | undefined {
  if (result.error !== undefined && result.finishReason === 'error')
    return `the model provider failed (${result.error.code}): ${result.error.message}`;
  if (result.finishReason === 'aborted') return 'the turn was cancelled';
  if (result.finishReason === 'max_steps')
    return `the model was still calling tools after ${maxSteps} steps, so the turn was stopped; ask for something smaller`;
  if (result.finishReason === 'length') return 'the answer was cut off at max_tokens; raise [plugins.entries.openrouter.config] max_tokens';
  return undefined;
}

const MAX_STEPS = 16;

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** `trellis chat ["prompt"]`: one turn, or a REPL on a terminal. */
export async function chat(line: CommandLine, io: CommandIO, assembly: Assembly): Promise<number> {
  let prompt = line.args[0];
  const terminal = prompt === undefined && Boolean(process.stdin.isTTY && process.stdout.isTTY) && !line.flags.json;
  if (prompt === undefined && !terminal) {
    prompt = process.stdin.isTTY ? '' : (await readStdin()).trim();
    if (prompt === '')
      throw new UsageError(
        '`trellis chat` needs a prompt: `trellis chat "your question"`, text on stdin, or a terminal for the interactive chat',
      );
  }
  const agent = await createAssemblyAgent(assembly, { system: CHAT_SYSTEM_PROMPT, maxSteps: MAX_STEPS });
  const session = agent.session();
  if (prompt === undefined) return repl(io, session);

  const turn = session.run(prompt);
  if (line.flags.json) {
    for await (const event of turn) void event;
    const result = await turn.result;
    io.out(
      toJson({
        reply: result.reply,
        steps: result.steps,
        usage: result.usage,
        model: result.model,
        finishReason: result.finishReason,
        ...(result.error !== undefined ? { error: result.error } : {}),
      }),
    );
    return problemOf(result, MAX_STEPS) === undefined ? EXIT.OK : EXIT.FAILED;
  }
  const printer = createPrinter(io.out, io.err);
  for await (const event of turn) printer.event(event);
  printer.endTurn();
  const result = await turn.result;
  const problem = problemOf(result, MAX_STEPS);
  if (problem !== undefined) throw new FailedError(problem);
  return EXIT.OK;
}

const REPL_HELP =
  'Type a message and press Enter. /tools lists the tools the model sees, /reset forgets the conversation, Ctrl-C cancels a running answer, Ctrl-D exits.\n';

/**
 * Approval questions (tools under [runtime.policy] ask) asked through the chat's own readline: a
 * second readline on the same terminal would also hand the answer to the chat as a message. One at
 * a time (readline drops a question asked while another waits). `withdraw()` ends the open ones
 * with a no: a question whose turn ended would otherwise take the next message as its answer.
 * Output that comes while one waits (a parallel call's trace line) is held until it is answered.
 */
function createQuestions(rl: Interface, show: (text: string) => void, mayAsk: () => boolean) {
  const open = new Set<AbortController>();
  let held = '';
  let asked: Promise<unknown> = Promise.resolve();
  const closed = (question: AbortController) => {
    open.delete(question);
    if (open.size > 0 || held === '') return;
    show(held);
    held = '';
  };
  return {
    ask(question: string): Promise<string> {
      const answer = asked.then(
        () =>
          new Promise<string>((resolve) => {
            if (!mayAsk()) return resolve('');
            const withdraw = new AbortController();
            open.add(withdraw);
            rl.question(`\n${question}`, { signal: withdraw.signal }, (text) => {
              closed(withdraw);
              resolve(text);
            });
            // After readline's own listener, which ends the question's line on screen.
            withdraw.signal.addEventListener('abort', () => {
              closed(withdraw);
              resolve('');
            });
          }),
      );
      asked = answer;
      return answer;
    },
    withdraw(): void {
      for (const question of [...open]) question.abort();
    },
    write(text: string): void {
      if (open.size > 0) held += text;
      else show(text);
    },
  };
}

/**
 * The interactive chat: streaming answers, a trace line per tool call, Ctrl-C cancels a turn, Ctrl-D
 * exits (cancelling a running turn first). When the terminal goes away (SIGHUP, end of input or EIO
 * on it) the running turn is cancelled and the chat ends with 129, as a hang-up ends every command.
 */
async function repl(io: CommandIO, session: AgentSession): Promise<number> {
  const { createInterface } = await import('node:readline');
  const input = process.stdin;
  const output = process.stdout;
  const rl = createInterface({ input, output, terminal: true, prompt: '› ' });

  let ending: 'exit' | 'hangup' | undefined;
  let hungUp = false;
  let running: { cancel(): void } | undefined;
  const questions = createQuestions(
    rl,
    (text) => {
      if (!hungUp) output.write(text);
    },
    () => ending === undefined && running !== undefined,
  );
  const write = questions.write;
  const lines: string[] = [];
  let wake: (() => void) | undefined;
  const end = (why: 'exit' | 'hangup') => {
    if (why === 'hangup') hungUp = true;
    if (ending !== undefined) return;
    ending = why;
    running?.cancel();
    questions.withdraw();
    wake?.();
    // On a terminal that is gone, readline's reset of raw mode fails: an 'error' that hangUp takes.
    rl.close();
  };
  const hangUp = () => end('hangup');
  // Once the terminal is gone these stay until the process exits: a late SIGHUP must not end it by
  // Node's default action (no plugin cleanup), and a late write error must not be an uncaught one.
  input.prependListener('end', hangUp); // raw mode has no end-of-file key: input ends when the terminal hangs up
  input.on('error', hangUp);
  output.on('error', hangUp);
  process.on('SIGHUP', hangUp);
  rl.on('error', hangUp);
  rl.on('close', () => end('exit'));
  rl.on('line', (line) => {
    lines.push(line);
    wake?.();
  });
  const nextLine = async (): Promise<string | undefined> => {
    while (lines.length === 0 && ending === undefined) await new Promise<void>((resolve) => (wake = resolve));
    wake = undefined;
    return ending === undefined ? lines.shift() : undefined;
  };
  // Once the terminal is gone nothing is written (io.err itself drops writes that fail with EIO).
  const warn = (text: string) => {
    if (!hungUp) io.err(text);
  };
  const prompt = () => {
    if (ending === undefined) rl.prompt();
  };
  const printer = createPrinter(write, write);
  const mutableIO = io as { ask?: CommandIO['ask'] };
  const previousAsk = mutableIO.ask;
  mutableIO.ask = questions.ask;
  rl.on('SIGINT', () => {
    if (running !== undefined) {
      running.cancel();
      questions.withdraw();
      return;
    }
    // Drops what was typed (readline's editing keys, Ctrl-U included, do nothing when TERM=dumb),
    // as Node's own REPL does on Ctrl-C; it also ends the line on screen.
    (rl as unknown as { clearLine(): void }).clearLine();
    write('(Ctrl-D exits)\n');
    prompt();
  });
  write(REPL_HELP);
  prompt();
  for (let raw = await nextLine(); raw !== undefined; raw = await nextLine()) {
    const text = raw.trim();
    if (text === '') {
      prompt();
      continue;
    }
    if (text === '/exit' || text === '/quit') break;
    if (text === '/reset') {
      session.reset();
      write('History cleared.\n');
    } else if (text === '/tools') {
      const { tools, largeCatalog } = session.visibleTools();
      write(tools.length === 0 ? 'The model sees no tools.\n' : `${tools.map((t) => `  ${t}`).join('\n')}\n`);
      if (largeCatalog) write('  find_tools (the catalog is large: the model searches it and loads more tools on demand)\n');
    } else if (text === '/help') {
      write(REPL_HELP);
    } else if (text.startsWith('/')) {
      write(`Unknown command ${text.split(/\s/)[0]}. ${REPL_HELP}`);
    } else {
      const turn = session.run(text);
      running = turn;
      for await (const event of turn) printer.event(event);
      running = undefined;
      questions.withdraw();
      printer.endTurn();
      const result = await turn.result;
      if (result.finishReason === 'aborted') write('(cancelled)\n');
      else {
        const problem = problemOf(result, MAX_STEPS);
        if (problem !== undefined) warn(`trellis: ${problem}\n`);
      }
    }
    prompt();
  }
  if (ending === undefined) end('exit');
  mutableIO.ask = previousAsk;
  if (hungUp) return EXIT_SIGNALS.SIGHUP;
  input.off('end', hangUp);
  input.off('error', hangUp);
  output.off('error', hangUp);
  process.off('SIGHUP', hangUp);
  write('\n');
  return EXIT.OK;
}
