import { IsolationUnavailableError, killGroup as killProcessGroup, prepareChildLauncher, PRLIMIT_PATH, startChild } from './launchChild.ts';
import type { LaunchedChild } from './launchChild.ts';
import type { StartedChild } from './spawnHelper.ts';

/** How to run a child process. The command is never given to a shell. */
export interface RunProcessOptions {
  readonly command: string;
  readonly args?: readonly string[];
  readonly cwd?: string;
  /** The child's whole environment; nothing is inherited that is not listed here. */
  readonly env?: Readonly<Record<string, string>>;
  /** Written to stdin, which is then closed. Without it stdin is closed at once. */
  readonly stdin?: string | Uint8Array;
  /** After this many milliseconds the whole process group is killed and `timedOut` is true. */
  readonly timeoutMs: number;
  /** Bytes kept of stdout and of stderr each; the rest is read and dropped, and `truncated` says so. */
  readonly maxOutputBytes: number;
  /** Aborting kills the whole process group, like the deadline. */
  readonly signal?: AbortSignal;
  /** Address-space limit for the child, enforced with prlimit(1) where available. */
  readonly maxMemoryMb?: number;
  /** CPU-time limit for the child, enforced with prlimit(1) where available. */
  readonly maxCpuSeconds?: number;
  /** Between SIGTERM and SIGKILL at the deadline. Default 250 ms. */
  readonly killGraceMs?: number;
}

/** What happened to a child. Never thrown: a spawn failure is `spawnError`. */
export interface RunProcessResult {
  /** Exit code, or null when a signal ended it or it never started. */
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly stdoutTruncated: boolean;
  readonly stderrTruncated: boolean;
  readonly timedOut: boolean;
  readonly aborted: boolean;
  readonly durationMs: number;
  /** Why the child could not be started (e.g. `ENOENT`), if it could not. */
  readonly spawnError?: string;
  /** Which resource limits were applied by the OS. */
  readonly limits: { readonly memory: boolean; readonly cpu: boolean };
  /** Whether the child ran in its own PID namespace, out of reach of the host's environment. */
  readonly isolated: boolean;
}

/** True when memory and CPU limits can be enforced on this machine. */
export function canLimitResources(): boolean {
  return PRLIMIT_PATH !== undefined;
}

/**
 * Runs a program in its own process group, without a shell, with a deadline, output caps and
 * optional resource limits, through the one launcher (`startChild`: forked by the spawn helper in
 * a long-running host), so the child is also kept from the host's secrets where the machine allows. When the leader exits, the deadline passes or
 * the signal aborts, the whole group is killed, so no grandchild outlives the call.
 */
export async function runProcess(options: RunProcessOptions): Promise<RunProcessResult> {
  // Loaded on first use: a host that never spawns (most `trellis` commands) never pays for it.
  await prepareChildLauncher();
  const started = performance.now();

  let launched: LaunchedChild<StartedChild>;
  try {
    launched = await startChild({
      command: options.command,
      args: options.args ?? [],
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      env: options.env ?? {},
      ...(options.maxMemoryMb === undefined ? {} : { maxMemoryMb: options.maxMemoryMb }),
      ...(options.maxCpuSeconds === undefined ? {} : { maxCpuSeconds: options.maxCpuSeconds }),
    });
  } catch (error) {
    // Node refuses some arguments before spawning (a NUL byte); isolation may be required but
    // missing; through the spawn helper, a spawn that fails (EAGAIN) rejects here too.
    // SPAWN_HELPER_LOST: the spawn helper was lost after the request left; the child may have run.
    const code = error instanceof IsolationUnavailableError ? error.code : ((error as NodeJS.ErrnoException).code ?? String(error));
    return {
      exitCode: null,
      signal: null,
      stdout: '',
      stderr: error instanceof Error ? error.message : '',
      stdoutTruncated: false,
      stderrTruncated: false,
      timedOut: false,
      aborted: false,
      durationMs: performance.now() - started,
      spawnError: code,
      limits: { memory: false, cpu: false },
      isolated: false,
    };
  }

  return new Promise((resolvePromise) => {
    const out = { chunks: [] as Buffer[], bytes: 0, truncated: false };
    const err = { chunks: [] as Buffer[], bytes: 0, truncated: false };
    let timedOut = false;
    let aborted = false;
    let spawnError: string | undefined;
    let settled = false;
    let killTimer: NodeJS.Timeout | undefined;
    const child = launched.child;
    const killGroup = (sig: NodeJS.Signals) => killProcessGroup(launched.pgid, sig);
    const stop = () => {
      // An isolated child is pid 1 of its namespace and ignores a SIGTERM it has no handler for,
      // while its own children would die of it: end the whole namespace at once instead.
      if (launched.isolated) {
        killGroup('SIGKILL');
        return;
      }
      killGroup('SIGTERM');
      killTimer ??= setTimeout(() => killGroup('SIGKILL'), options.killGraceMs ?? 250);
    };

    const collect = (sink: typeof out) => (chunk: Buffer) => {
      const room = options.maxOutputBytes - sink.bytes;
      if (room <= 0) {
        sink.truncated = true;
        return;
      }
      if (chunk.length > room) {
        sink.chunks.push(chunk.subarray(0, room));
        sink.bytes += room;
        sink.truncated = true;
      } else {
        sink.chunks.push(chunk);
        sink.bytes += chunk.length;
      }
    };
    child.stdout.on('data', collect(out));
    child.stderr.on('data', collect(err));
    child.stdin.on('error', () => {
      // The child closed stdin early (EPIPE); its exit status tells the rest.
    });

    // The deadline counts from the call, so time spent waiting for the spawn counts too.
    const deadline = setTimeout(
      () => {
        timedOut = true;
        stop();
      },
      Math.max(0, options.timeoutMs - (performance.now() - started)),
    );
    const onAbort = () => {
      aborted = true;
      stop();
    };
    if (options.signal?.aborted) onAbort();
    else options.signal?.addEventListener('abort', onAbort, { once: true });

    const finish = (exitCode: number | null, signal: NodeJS.Signals | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      // The leader is gone: take any grandchildren still in its group with it.
      killGroup('SIGKILL');
      if (killTimer) clearTimeout(killTimer);
      options.signal?.removeEventListener('abort', onAbort);
      resolvePromise({
        exitCode,
        signal,
        stdout: Buffer.concat(out.chunks).toString('utf8'),
        stderr: Buffer.concat(err.chunks).toString('utf8'),
        stdoutTruncated: out.truncated,
        stderrTruncated: err.truncated,
        timedOut,
        aborted,
        durationMs: performance.now() - started,
        ...(spawnError === undefined ? {} : { spawnError }),
        limits: launched.limits,
        isolated: launched.isolated,
      });
    };

    child.on('error', (error: NodeJS.ErrnoException) => {
      spawnError = error.code ?? error.message;
      finish(null, null);
    });
    child.on('exit', (code, signal) => {
      // Grandchildren may hold the pipes open; kill the group so 'close' can follow promptly.
      killGroup('SIGKILL');
      const grace = setTimeout(() => finish(code, signal), 500);
      child.once('close', () => {
        clearTimeout(grace);
        finish(code, signal);
      });
    });

    if (options.stdin !== undefined) child.stdin.end(options.stdin);
    else child.stdin.end();
  });
}
