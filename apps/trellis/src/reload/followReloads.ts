import type { CommandIO } from '../io.ts';
import { describeReload } from './describeReload.ts';
import type { LiveHost, ReloadResult } from './startLiveHost.ts';

/**
 * For `serve` and `run`: reload on SIGHUP, and write every reload's result and every warning of the
 * host's own to stderr (`text` for serve, one JSON line for run's structured log). Returns a
 * function that stops all three.
 */
export function followReloads(host: LiveHost, io: CommandIO, format: 'text' | 'json'): () => void {
  const write = (result: ReloadResult): void => {
    if (format === 'text') io.err(`trellis: ${describeReload(result)}\n`);
    else
      io.err(
        `${JSON.stringify({ time: result.at, level: result.status === 'rejected' ? 'error' : 'info', component: 'reload', msg: describeReload(result), ...result })}\n`,
      );
  };
  const unsubscribe = host.onReload(write);
  const unwarn = host.onWarning((message) => {
    if (format === 'text') io.err(`trellis: warning: ${message}\n`);
    else io.err(`${JSON.stringify({ time: new Date().toISOString(), level: 'warn', component: 'host', msg: message })}\n`);
  });
  const onHangup = (): void => void host.reload('signal');
  process.on('SIGHUP', onHangup);
  return () => {
    unsubscribe();
    unwarn();
    process.off('SIGHUP', onHangup);
  };
}
