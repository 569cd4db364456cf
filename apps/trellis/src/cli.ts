#!/usr/bin/env node
// First: holds SIGHUP for serve/run from the moment Trellis's code runs (see earlyHangups.ts).
import './earlyHangups.ts';
import { endsByExit, main, processIO } from './main.ts';
import { releaseTerminalAtExit } from './shutdown.ts';

// While the terminals are still there: a command whose terminal hangs up later (a host stopped
// afterwards, a command that traps no signal) then exits with its own code, not Node 20's abort.
releaseTerminalAtExit();

// No top-level await: this entry is built as CommonJS (see tsup.config.ts).
void main(process.argv.slice(2), processIO()).then((code) => {
  process.exitCode = code;
  // serve and run leave by exit(): a natural exit first closes every handle, SIGHUP's included,
  // and a SIGHUP in that window (a terminal closing as the host stops) would end the process by
  // Node's default action instead of this exit code. Their logs and plugins are closed by now.
  if (endsByExit()) process.exit(code);
});
