import { closeSync, openSync } from 'node:fs';
import { isatty } from 'node:tty';

/** The signals that end the CLI, with the exit code each leaves (128 + its number). */
export const EXIT_SIGNALS = { SIGHUP: 129, SIGINT: 130, SIGTERM: 143 } as const;

/** Longest wait for a clean shutdown before leaving anyway (the exit hook then SIGKILLs what is left). */
export const SHUTDOWN_LIMIT_MS = 10_000;

/**
 * Makes the one shutdown of a command that holds plugin processes: the first call runs `close`
 * (plugins get `shutdown` and end of input, then SIGTERM, then SIGKILL, group by group), later
 * calls share it. It never waits longer than `limitMs`: past that it resolves and the caller
 * exits, and the runtime's `process.on('exit')` hook SIGKILLs every plugin group still alive.
 * Commands that end on their own input (a server whose stdin closed) call this, then exit.
 */
export function createShutdown(close: () => Promise<void>, limitMs = SHUTDOWN_LIMIT_MS): () => Promise<void> {
  let done: Promise<void> | undefined;
  return () => {
    done ??= new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, limitMs);
      timer.unref();
      close().then(
        () => {
          clearTimeout(timer);
          resolve();
        },
        () => {
          clearTimeout(timer);
          resolve();
        },
      );
    });
    return done;
  };
}

/**
 * While a command runs: on SIGINT, SIGTERM or SIGHUP, shut down (see `createShutdown`) and exit
 * with 128 + the signal's number; a second signal exits at once (the exit hook still kills every
 * plugin group). `signals` narrows the set (a live host keeps SIGHUP for reloading). Returns a
 * function that removes the trap.
 */
export function trapExitSignals(
  close: () => Promise<void>,
  signals: readonly NodeJS.Signals[] = Object.keys(EXIT_SIGNALS) as NodeJS.Signals[],
): () => void {
  const shutdown = createShutdown(close);
  let stopping = false;
  const handler = (signal: NodeJS.Signals) => {
    const code = EXIT_SIGNALS[signal as keyof typeof EXIT_SIGNALS] ?? 1;
    if (stopping) process.exit(code);
    stopping = true;
    void shutdown().finally(() => process.exit(code));
  };
  for (const signal of signals) process.on(signal, handler);
  return () => {
    for (const signal of signals) process.off(signal, handler);
  };
}

/**
 * Node restores the terminal settings of stdin, stdout and stderr as it exits, and Node 20 aborts
 * (SIGABRT) when that fails, as it does on a terminal that hung up (nodejs/node#58200 drops the
 * check). It skips a descriptor that no longer names that terminal, so at exit each of 0–2 that was
 * a terminal when this ran and is not one now (isatty fails once the terminal is gone) is pointed at
 * /dev/null. The CLI registers it as it starts (while the terminals are still there); a command on a
 * terminal that hangs up then exits with its own code (129) instead of an abort.
 */
export function releaseTerminalAtExit(): void {
  const ttys = [0, 1, 2].filter((fd) => isatty(fd));
  if (ttys.length === 0) return;
  process.once('exit', () => {
    for (const fd of ttys) {
      if (isatty(fd)) continue;
      try {
        closeSync(fd);
        openSync('/dev/null', 'r+'); // takes the lowest free descriptor: this one
      } catch {
        // closed is as good: Node skips a descriptor it cannot stat
      }
    }
  });
}
