/**
 * `serve` and `run` take SIGHUP as "reload". Node's default action for SIGHUP ends the process
 * with no exit hook, so a SIGHUP that arrives before the host holds it would kill a starting host.
 * The CLI entry imports this module first: the hold begins as soon as Trellis's own code runs,
 * not after every module of the command has loaded (tens of ms later). Only Node's own start-up
 * (before any of this code runs) is left uncovered. The command line is not parsed yet, so any
 * `serve` or `run` word holds; `main()` takes the hold over once it knows the command, and hands a
 * SIGHUP back to any other command (where it means "the terminal is gone").
 */
let pending = false;
let held = false;
const onHangup = (): void => {
  pending = true;
};
if (process.argv.slice(2).some((word) => word === 'serve' || word === 'run')) {
  held = true;
  process.on('SIGHUP', onHangup);
}

/** Ends the early hold (once) and says whether a SIGHUP arrived while it held. */
export function takeEarlyHangups(): boolean {
  if (held) {
    held = false;
    process.off('SIGHUP', onHangup);
  }
  const arrived = pending;
  pending = false;
  return arrived;
}
