import { SHUTDOWN_LIMIT_MS } from './shutdown.ts';

/**
 * For `serve` and `run`, where SIGHUP means "reload": holds SIGHUP while no reload handler is
 * installed (the host is starting, or closing), so that a SIGHUP then does not end the process by
 * Node's default action, which runs no exit hook. `release()` removes the hold and says whether a
 * SIGHUP arrived meanwhile (a host that has just started should then reload once: its config may
 * have changed while it was being read).
 */
export function holdHangups(): { release(): boolean } {
  let pending = false;
  const onHangup = (): void => {
    pending = true;
  };
  process.on('SIGHUP', onHangup);
  let released = false;
  return {
    release() {
      if (!released) {
        released = true;
        process.off('SIGHUP', onHangup);
      }
      return pending;
    },
  };
}

/**
 * Runs `close` for at most `limitMs`. Resolves true when it finished, false when it did not: the
 * caller then leaves anyway (the runtime's exit hook SIGKILLs every plugin group still alive), as
 * the signal paths already do (see `createShutdown`).
 */
export async function closeWithin(close: () => Promise<void>, limitMs = SHUTDOWN_LIMIT_MS): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), limitMs);
    timer.unref();
  });
  try {
    return await Promise.race([
      close().then(
        () => true,
        () => true,
      ),
      limit,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
