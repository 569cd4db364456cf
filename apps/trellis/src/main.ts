import type { ApprovalHook } from '@trellis/runtime';
import { assemble } from './assemble.ts';
import { TRELLIS_VERSION } from './bundled.gen.ts';
import { createFdWriter } from './fdWriter.ts';
import { ConfigError, EXIT, FailedError, UsageError, exitCodeFor } from './errors.ts';
import { HELP } from './help.ts';
import type { CommandIO } from './io.ts';
import { parseCommandLine } from './parseCommandLine.ts';
import { SHUTDOWN_LIMIT_MS, trapExitSignals } from './shutdown.ts';
import { commandLineSwitches, writeJsonError } from './cliHabits.ts';
import { readStandardInput } from './readStandardInput.ts';
import { closeWithin, holdHangups } from './liveExit.ts';
import { takeEarlyHangups } from './earlyHangups.ts';
import { resolveHostPaths } from './loadConfig.ts';

/**
 * The IO of the real process: stdout, stderr, and a prompt when both ends are terminals. Nothing
 * here touches `process.stdin/stdout/stderr` until it must: each of those streams costs milliseconds
 * to create, on every start (see createFdWriter).
 */
export function processIO(): CommandIO {
  let interactive: boolean | undefined;
  return {
    out: createFdWriter(1, () => process.stdout),
    err: createFdWriter(2, () => process.stderr),
    get interactive() {
      return (interactive ??= Boolean(process.stdin.isTTY && process.stderr.isTTY));
    },
    async ask(question) {
      const { createInterface } = await import('node:readline/promises');
      const rl = createInterface({ input: process.stdin, output: process.stderr });
      try {
        return await rl.question(question);
      } finally {
        rl.close();
      }
    },
    readStdin: (maxBytes) => readStandardInput(maxBytes),
    trapSignals(cleanup, signals) {
      return trapExitSignals(cleanup, signals);
    },
  };
}

/** A prompt on a terminal; a refusal otherwise (no TTY means nobody can say yes). */
function approvalHook(io: CommandIO): ApprovalHook {
  return async (request) => {
    if (!io.interactive || io.ask === undefined) {
      const allow =
        request.reason === 'policy'
          ? `, or remove "${request.rule}" from [runtime.policy] ask in runtime.toml to allow it without asking`
          : ' (its contract asks every time; an embedding host can pass an approval hook)';
      return {
        refused: `nobody could be asked (stdin and stderr are not terminals, so there is no one to prompt); run it from a terminal to be asked${allow}`,
      };
    }
    const summary = request.summary ? ` ${JSON.stringify(request.summary)}` : '';
    const answer = await io.ask(`Allow ${request.tool}${summary}? [y/N] `);
    return /^y(es)?$/i.test(answer.trim());
  };
}

let longRunningCommand = false;
/** True once `main()` ran `serve` or `run`, which the CLI entry ends with `process.exit` (see cli.ts). */
export function endsByExit(): boolean {
  return longRunningCommand;
}

/** Runs one `trellis` command line and returns its exit code. The one place errors become exit codes. */
export async function main(
  argv: readonly string[],
  io: CommandIO,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<number> {
  // `doctor` with a config that cannot be used still says which running hosts serve an older one.
  let doctorWorkspace: string | undefined;
  try {
    const line = parseCommandLine(argv);
    if (line.version) {
      io.out(`${TRELLIS_VERSION}\n`);
      return EXIT.OK;
    }
    if (line.help) {
      io.out(HELP);
      return EXIT.OK;
    }
    if (line.command.length === 0) {
      io.err(HELP);
      return EXIT.USAGE;
    }
    const name = line.command.join(' ');
    // serve and run hold SIGHUP until they stop (see earlyHangups.ts and below); any other
    // command gets back a SIGHUP the early hold caught, with its usual meaning.
    const longRunning = name === 'serve' || name === 'run';
    longRunningCommand = longRunning;
    if (!longRunning && takeEarlyHangups()) process.kill(process.pid, 'SIGHUP');
    // Each command's module is loaded when that command runs: a start pays for the code of its
    // own command only (bench/startup), not for every other command's libraries.
    if (name === 'config check') return await (await import('./commands/configCheck.ts')).configCheck(line, io, env);
    if (name === 'config show') return await (await import('./commands/configShow.ts')).configShow(line, io, env);
    if (name === 'trust') return (await import('./commands/trust.ts')).trust(line, io, env);
    if (name === 'mcp import' || name === 'mcp approve') return await (await import('./commands/mcp.ts')).mcpCommand(line, io, env);
    if (name === 'plugin new') return (await import('./commands/pluginAuthoring.ts')).pluginNew(line, io);
    if (name === 'plugin test') return await (await import('./commands/pluginAuthoring.ts')).pluginTest(line, io, env);
    if (name === 'status') return await (await import('./commands/status.ts')).status(line, io, env);
    if (name === 'plugins list' && line.options.running === true)
      return await (await import('./commands/status.ts')).pluginsListRunning(line, io, env);

    if (name === 'doctor' && !line.flags.json) doctorWorkspace = resolveHostPaths({ workspace: line.flags.workspace, env }).workspace;
    const assembleOptions = {
      ...(line.flags.config !== undefined ? { configPath: line.flags.config } : {}),
      ...(line.flags.workspace !== undefined ? { workspace: line.flags.workspace } : {}),
      ...(line.flags.profile !== undefined ? { profile: line.flags.profile } : {}),
      pluginPaths: line.flags.pluginPaths,
      env,
      approve: approvalHook(io),
      discoverExternalTools:
        name.startsWith('tools') ||
        name === 'doctor' ||
        name === 'plugins explain' ||
        name === 'chat' ||
        name === 'run' ||
        name === 'serve',
      refreshToolSources: name === 'doctor' || name === 'plugins explain',
      ...commandLineSwitches(line),
    };
    // `serve` and `run` run until stopped: they follow their config (live reload, SIGHUP reloads).
    // Until followReloads listens, a SIGHUP must not end a starting host by Node's default action.
    const starting = longRunning ? holdHangups() : undefined;
    // Taken over from the early hold after the new one is in place, so no SIGHUP finds neither.
    const hungUpEarly = longRunning && takeEarlyHangups();
    // The live host and its reload reporting load together, before anything starts: a failed load
    // must still release SIGHUP.
    const reloading = longRunning
      ? await Promise.all([import('./reload/startLiveHost.ts'), import('./reload/followReloads.ts')]).catch((error: unknown) => {
          starting?.release();
          throw error;
        })
      : undefined;
    const live =
      reloading === undefined
        ? undefined
        : await reloading[0].startLiveHost(assembleOptions).catch((error: unknown) => {
            starting?.release();
            throw error;
          });
    const assembly = live?.assembly ?? (await assemble(assembleOptions));
    const unfollow =
      live === undefined || reloading === undefined ? undefined : reloading[1].followReloads(live, io, name === 'run' ? 'json' : 'text');
    if (starting?.release() === true || hungUpEarly) void live?.reload('signal');
    // `run` handles SIGINT/SIGTERM itself: it stops its connectors gracefully before disposing.
    const untrap =
      name === 'run' ? undefined : io.trapSignals?.(() => assembly.dispose(), live === undefined ? undefined : ['SIGINT', 'SIGTERM']);
    try {
      if (!line.flags.json) for (const w of assembly.configWarnings) io.err(`warning: ${w.message}\n`);
      switch (name) {
        case 'doctor':
          return await (await import('./commands/doctor.ts')).doctor(line, io, assembly, env);
        case 'plugins list':
          return (await import('./commands/plugins.ts')).pluginsList(line, io, assembly);
        case 'plugins explain':
          return (await import('./commands/plugins.ts')).pluginsExplain(line, io, assembly);
        case 'tools list':
          return (await import('./commands/tools.ts')).toolsList(line, io, assembly);
        case 'tools describe':
          return (await import('./commands/tools.ts')).toolsDescribe(line, io, assembly);
        case 'tools search':
          return (await import('./commands/tools.ts')).toolsSearch(line, io, assembly);
        case 'tools call':
          return await (await import('./commands/tools.ts')).toolsCall(line, io, assembly);
        case 'chat':
          return await (await import('./commands/chat.ts')).chat(line, io, assembly);
        case 'run':
          return await (await import('./commands/run.ts')).runConnectors(line, io, assembly, live);
        case 'serve':
          return await (await import('./commands/serve.ts')).serve(line, io, assembly, env, live);
        default:
          throw new Error(`command "${name}" is parsed but not wired`);
      }
    } finally {
      if (live === undefined) {
        untrap?.();
        unfollow?.();
        await assembly.dispose();
      } else {
        // A live host closing (stdin closed, run stopped): SIGHUP stays held, SIGINT/SIGTERM stay
        // trapped, and the close is bounded like a signal's, so no way out hangs on a plugin or a
        // reload that will not end; past the limit the exit hook SIGKILLs what is left.
        const closing = holdHangups();
        // run trapped SIGINT/SIGTERM itself until it returned; from here they are trapped as for
        // serve, so one that comes while the plugins stop is an exit of ours, never a death.
        const untrapLate = name === 'run' ? io.trapSignals?.(() => assembly.dispose(), ['SIGINT', 'SIGTERM']) : undefined;
        unfollow?.();
        const closed = await closeWithin(() => assembly.dispose());
        untrap?.();
        untrapLate?.();
        // The real process keeps holding SIGHUP until it exits: one that arrives while the last
        // handles close would otherwise end it by Node's default action instead of a clean exit.
        if (io.trapSignals === undefined) closing.release();
        if (!closed && io.trapSignals !== undefined) {
          io.err(`trellis ${name}: plugins did not stop within ${SHUTDOWN_LIMIT_MS / 1000} s; ending them\n`);
          setTimeout(() => process.exit(), 0).unref();
        }
      }
    }
  } catch (error) {
    writeJsonError(io, argv, error);
    if (error instanceof ConfigError) {
      io.err(
        `trellis: the config cannot be used:\n${error.problems.map((p) => `  ${p.code}  ${p.message}`).join('\n')}\nRun \`trellis config check\` after fixing it.\n`,
      );
      if (doctorWorkspace !== undefined) {
        const { formatCheck, runningHostChecks } = await import('./commands/doctor.ts');
        for (const check of await runningHostChecks(env, doctorWorkspace).catch(() => [])) io.err(`${formatCheck(check)}\n`);
      }
    } else if (error instanceof FailedError) {
      io.err(`trellis: ${error.message}\n`);
    } else if (error instanceof UsageError) {
      io.err(`trellis: ${error.message}\n`);
    } else {
      const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
      io.err(`trellis: internal error (a bug in Trellis; please report it):\n${detail}\n`);
    }
    return exitCodeFor(error);
  }
}
