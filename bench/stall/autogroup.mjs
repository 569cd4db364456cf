// Why bench/stall's event-loop delay rises while tools spin in the worker pool: on Linux with
// autogroup scheduling (/proc/sys/kernel/sched_autogroup_enabled = 1) a session is one unit
// against the machine's other sessions, so CPU-bound worker threads use up the host process's own
// share and its main thread waits on every wake-up, although the workers run at nice +10 (as the
// pool's do, workerSource.ts). The same spin in processes of their own session does not.
// `node bench/stall/autogroup.mjs` prints the event-loop delay over 3 s for: nothing else running,
// 4 spinning worker threads, 4 spinning processes in their own session. See
// docs/decisions/0011-stall-and-burst.md.
import { spawn } from 'node:child_process';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';

const SPINNERS = 4;
const spin = `
const { getPriority, setPriority } = require('node:os');
try {
  const tid = Number(require('node:fs').readFileSync('/proc/thread-self/stat', 'utf8').split(' ')[0]);
  setPriority(tid, Math.min(19, getPriority(tid) + 10));
} catch {}
const end = Date.now() + 4000;
while (Date.now() < end) {}
`;

async function delayWhile(mode) {
  const stops = [];
  for (let i = 0; i < SPINNERS && mode !== 'idle'; i += 1) {
    if (mode === 'threads') {
      const worker = new Worker(spin, { eval: true });
      stops.push(() => worker.terminate());
    } else {
      const child = spawn(process.execPath, ['-e', spin], { detached: true, stdio: 'ignore' });
      stops.push(() => child.kill('SIGKILL'));
    }
  }
  await new Promise((resolve) => setTimeout(resolve, 300));
  const histogram = monitorEventLoopDelay({ resolution: 5 });
  histogram.enable();
  await new Promise((resolve) => setTimeout(resolve, 3000));
  histogram.disable();
  await Promise.all(stops.map((stop) => stop()));
  return { p99: histogram.percentile(99) / 1e6, max: histogram.max / 1e6 };
}

for (const mode of ['idle', 'threads', 'processes']) {
  const { p99, max } = await delayWhile(mode);
  process.stdout.write(`${mode.padEnd(10)} event-loop delay p99 ${p99.toFixed(1)} ms, max ${max.toFixed(1)} ms\n`);
}
