import type { AgentEvent, AgentSession, TurnResult } from '@trellis/agent';
import { createAssemblyAgent } from '../agentHost.ts';
import type { Assembly } from '../assemble.ts';
import { EXIT, FailedError, UsageError } from '../errors.ts';
import type { CommandIO } from '../io.ts';
import { toJson } from '../io.ts';
import type { CommandLine } from '../parseCommandLine.ts';

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

/** The interactive chat: streaming answers, a trace line per tool call, Ctrl-C cancels a turn, Ctrl-D exits. */
async function repl(io: CommandIO, session: AgentSession): Promise<number> {
  const { createInterface } = await import('node:readline');
  const rl = createInterface({ input: process.stdin, output: process.stdout, terminal: true, prompt: '› ' });
  const write = (text: string) => void process.stdout.write(text);
  const printer = createPrinter(write, write);
  // Approval prompts (tools under [runtime.policy] ask) go through this readline: a second one on the
  // same terminal would also hand the answer to the chat as a message.
  const mutableIO = io as { ask?: CommandIO['ask'] };
  const previousAsk = mutableIO.ask;
  mutableIO.ask = (question) => new Promise<string>((resolve) => rl.question(`\n${question}`, resolve));
  let running: { cancel(): void } | undefined;
  rl.on('SIGINT', () => {
    if (running !== undefined) {
      running.cancel();
      return;
    }
    rl.write(null, { ctrl: true, name: 'u' }); // clear what was typed
    write('\n(Ctrl-D exits)\n');
    rl.prompt();
  });
  write(REPL_HELP);
  rl.prompt();
  for await (const raw of rl) {
    const text = raw.trim();
    if (text === '') {
      rl.prompt();
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
      printer.endTurn();
      running = undefined;
      const result = await turn.result;
      if (result.finishReason === 'aborted') write('(cancelled)\n');
      else {
        const problem = problemOf(result, MAX_STEPS);
        if (problem !== undefined) io.err(`trellis: ${problem}\n`);
      }
    }
    rl.prompt();
  }
  rl.close();
  mutableIO.ask = previousAsk;
  write('\n');
  return EXIT.OK;
}
