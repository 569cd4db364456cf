import type { Logger } from '@trellis/sdk';
import type { Assembly } from '../assemble.ts';
import { EXIT, UsageError } from '../errors.ts';
import type { CommandIO } from '../io.ts';
import type { CommandLine } from '../parseCommandLine.ts';
import { CHAT_SYSTEM_PROMPT } from './chat.ts';
import type { HostControl } from '../status/openHostControl.ts';
import type { LiveHost } from '../reload/startLiveHost.ts';
import { stopWithin, superviseRun } from './superviseRun.ts';

/** Default seconds `trellis run` lets running turns finish after SIGINT/SIGTERM. */
export const DEFAULT_GRACE_SECONDS = 10;

/** Structured log lines on stderr: one JSON object per line with time, level, component and message. */
export function createJsonLogger(write: (text: string) => void, component: string): Logger {
  const log = (level: string) => (message: string, fields?: Readonly<Record<string, unknown>>) =>
    write(`${JSON.stringify({ time: new Date().toISOString(), level, component, msg: message, ...fields })}\n`);
  return { debug: () => {}, info: log('info'), warn: log('warn'), error: log('error') };
}

/** The first SIGINT/SIGTERM and the second, trapped from the start (a signal while connectors start is not lost). */
function signals(): { first: Promise<NodeJS.Signals>; again: Promise<void>; received(): NodeJS.Signals | undefined; dispose(): void } {
  let received: NodeJS.Signals | undefined;
  let resolveFirst!: (signal: NodeJS.Signals) => void;
  let resolveAgain!: () => void;
  const first = new Promise<NodeJS.Signals>((r) => (resolveFirst = r));
  const again = new Promise<void>((r) => (resolveAgain = r));
  const handler = (signal: NodeJS.Signals) => {
    if (received === undefined) {
      received = signal;
      resolveFirst(signal);
    } else resolveAgain();
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return {
    first,
    again,
    received: () => received,
    dispose() {
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
    },
  };
}

/**
 * `trellis run`: starts every enabled connector on one agent and serves until SIGINT/SIGTERM (one
 * while the connectors start ends their start); then starts no more turns, lets running turns finish
 * for the grace period, cancels the rest, abandons what the connectors still send a moment later (at
 * once on a second signal), and returns (the caller disposes the assembly, so no plugin process
 * outlives it). On a live host it follows each applied reload: a changed provider serves the turns
 * that start after it, connectors are started, stopped or restarted as their settings say (see
 * docs/agent.md).
 */
export async function runConnectors(
  line: CommandLine,
  io: CommandIO,
  assembly: Assembly,
  live?: Pick<LiveHost, 'status'> & Partial<Pick<LiveHost, 'onReload'>>,
): Promise<number> {
  const graceText = line.options.grace;
  const graceSeconds = graceText === undefined ? DEFAULT_GRACE_SECONDS : Number(graceText);
  if (!Number.isFinite(graceSeconds) || graceSeconds < 0 || graceSeconds > 3600) {
    throw new UsageError(`--grace must be a number of seconds between 0 and 3600; got "${graceText}"`);
  }
  // Nobody answers prompts while serving: a tool that needs approval ends with APPROVAL_DENIED.
  (io as { ask?: CommandIO['ask'] }).ask = undefined;
  const logger = createJsonLogger(io.err, 'trellis');
  const trap = signals();
  let control: HostControl | undefined;
  let unfollow: (() => void) | undefined;
  let keepAlive: NodeJS.Timeout | undefined;
  try {
    const supervisor = await superviseRun({
      assembly,
      system: CHAT_SYSTEM_PROMPT,
      graceSeconds,
      logger,
      agentLogger: createJsonLogger(io.err, 'agent'),
      loggerFor: (id) => createJsonLogger(io.err, id),
    });
    const { host } = supervisor;

    const stopServing = async (signal: NodeJS.Signals): Promise<number> => {
      unfollow?.();
      unfollow = undefined;
      logger.info('stopping', { signal, running: host.running(), graceSeconds });
      let interrupted = false;
      void trap.again.then(() => {
        interrupted = true;
        logger.warn('second signal: cancelling running turns and abandoning what is in flight now', { running: host.running() });
      });
      host.close();
      const stopped = await stopWithin(supervisor.stop(), {
        graceSeconds,
        interrupt: trap.again,
        onGraceOver: () => {
          if (!interrupted) logger.warn('grace period over: cancelling running turns', { running: host.running() });
          host.cancelAll();
        },
        onAbandon: () => {
          if (!interrupted)
            logger.warn('connectors still stopping after their turns were cancelled: abandoning what they still send', {
              connectors: supervisor.stopping(),
            });
          supervisor.abandon();
        },
      });
      if (!stopped) logger.error('connectors did not stop in time; leaving them behind', { connectors: supervisor.stopping() });
      logger.info('stopped', { signal });
      return EXIT.OK;
    };

    const early = trap.received();
    if (early !== undefined) return await stopServing(early);
    const outcome = await Promise.race([supervisor.start().then((failure) => ({ failure })), trap.first.then((signal) => ({ signal }))]);
    if ('signal' in outcome) return await stopServing(outcome.signal);
    if (outcome.failure !== undefined) {
      const { failure } = outcome;
      logger.error('connector failed to start', { connector: failure.failed, code: 'CONNECTOR_FAILED', error: failure.error });
      return EXIT.FAILED;
    }
    if (live?.onReload !== undefined) {
      unfollow = live.onReload((result) => {
        if (result.status === 'applied') void supervisor.follow(result.generation);
      });
      // A reload applied while the connectors started is caught up now (a no-op when there was none).
      void supervisor.follow(live.status().generation);
    }
    // Loaded here, not at the CLI's start: node:net is not worth loading for every other command.
    const { openHostControl } = await import('../status/openHostControl.ts');
    control = await openHostControl({
      assembly,
      live,
      command: 'run',
      warn: (message) => logger.warn(message, { code: 'CONTROL_SOCKET' }),
    });
    logger.info('serving', {
      connectors: supervisor.running(),
      model: supervisor.agent.model,
      pid: process.pid,
      ...(control.path ? { control: control.path } : {}),
    });
    // Serving holds the process even while no connector runs (a reload may start one): nothing
    // else need keep the event loop alive until the signal.
    keepAlive = setInterval(() => {}, 2 ** 30);
    return await stopServing(await trap.first);
  } finally {
    clearInterval(keepAlive);
    unfollow?.();
    await control?.close();
    // Last: a signal while the control socket closes is still this trap's, not a death.
    trap.dispose();
  }
}
