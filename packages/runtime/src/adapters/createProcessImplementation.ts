import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { failOutcome, okOutcome, silentLogger } from '@trellis/sdk';
import type { Logger, PluginManifest, PluginRuntime, ToolOutcome, ToolSpec } from '@trellis/sdk';
import type { ImplementationCall, LifecycleState, PluginImplementation } from '../PluginImplementation.ts';
import { callStopSignal, stoppedOutcome } from './callDeadline.ts';
import { buildChildEnv, expandEnvMap } from './childEnv.ts';
import { LineSplitter } from './LineSplitter.ts';
import { notDispatched } from './notDispatched.ts';
import { killGroup, trackGroup, untrackGroup, withMemoryLimit } from './processGroups.ts';
import { pluginFailure, previewPluginValue } from './renderPluginValue.ts';
import { resolveCommand } from './resolveCommand.ts';
import { StderrRelay } from './StderrRelay.ts';
import { discoveredToolSpecs } from './toolSpecs.ts';
import { failureValueOfReply } from './failureValueOfReply.ts';

/** A manifest's `[runtime]` table for `type = "process"`, with `[plugins.entries.<id>]` overrides applied. */
export type ProcessRuntime = Extract<PluginRuntime, { type: 'process' }>;

/** A reply line longer than this is a protocol error (10 MiB). */
export const MAX_PROTOCOL_LINE_BYTES = 10 * 1024 * 1024;
/** A child that stays up this long has its crash count reset (5 minutes). */
export const STABLE_UPTIME_MS = 5 * 60 * 1000;

/** Everything `createProcessImplementation` needs. */
export interface ProcessImplementationOptions {
  readonly pluginId: string;
  readonly manifest: PluginManifest;
  /** Realpath of the plugin folder: the child's cwd and the base of a relative `command`. */
  readonly pluginDir: string;
  /** The child's working folder (`[runtime] cwd`, resolved and checked); default the plugin folder. */
  readonly workingDir?: string;
  readonly runtime: ProcessRuntime;
  /** `[plugins.entries.<id>] config`, sent in `initialize {config}`. */
  readonly config?: Readonly<Record<string, unknown>>;
  /** The host environment: the source of the allow-listed variables and of `${VAR}` in `[runtime.env]`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly logger?: Logger;
  /** Longest accepted reply line; default `MAX_PROTOCOL_LINE_BYTES`. */
  readonly maxLineBytes?: number;
  /** Wait after `shutdown` before SIGTERM, and after SIGTERM before SIGKILL; default 1000 ms each. */
  readonly shutdownGraceMs?: number;
}

type Message = Record<string, unknown>;
type Reply =
  | { readonly kind: 'message'; readonly message: Message }
  | { readonly kind: 'protocol'; readonly message: string }
  | { readonly kind: 'exit'; readonly message: string }
  | { readonly kind: 'stopped' }
  | { readonly kind: 'retired' };
type LaunchResult = { readonly ok: true } | { readonly ok: false; readonly message: string };

interface Pending {
  readonly id: number;
  readonly resolve: (reply: Reply) => void;
  /** For fast-path calls: the absolute deadline the shared sweep timer enforces, and how. */
  readonly deadlineAt?: number;
  readonly expire?: () => void;
}

/** One run of the child: its process, pipes, outstanding requests and protocol mode. */
class Session {
  readonly pending = new Map<number, Pending>();
  /** Undefined until the initialize reply tells whether the plugin echoes ids. */
  echoesIds: boolean | undefined;
  retired = false;
  exited = false;
  exitMessage = '';
  readonly exitedPromise: Promise<void>;
  #markExited!: () => void;
  #busy = false;
  #waiters: Array<() => void> = [];

  constructor(
    readonly proc: ChildProcessWithoutNullStreams,
    readonly stderr: StderrRelay,
  ) {
    this.exitedPromise = new Promise((resolve) => {
      this.#markExited = resolve;
    });
  }

  get pgid(): number | undefined {
    return this.proc.pid;
  }

  finish(message: string): void {
    if (this.exited) return;
    this.exited = true;
    this.exitMessage = message;
    for (const p of this.pending.values()) p.resolve({ kind: 'exit', message });
    this.pending.clear();
    for (const wake of this.#waiters.splice(0)) wake();
    this.#markExited();
  }

  /** One request at a time for plugins that do not echo ids. Resolves false when `signal` fires first. */
  acquire(signal: AbortSignal): Promise<boolean> {
    if (!this.#busy) {
      this.#busy = true;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const wake = () => {
        signal.removeEventListener('abort', onAbort);
        resolve(true);
      };
      const onAbort = () => {
        this.#waiters = this.#waiters.filter((w) => w !== wake);
        resolve(false);
      };
      this.#waiters.push(wake);
      signal.addEventListener('abort', onAbort);
    });
  }

  release(): void {
    const next = this.#waiters.shift();
    if (next) next();
    else this.#busy = false;
  }

  get busy(): boolean {
    return this.#busy;
  }
}

function isMessage(value: unknown): value is Message {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function preview(text: string): string {
  return text.length > 120 ? `${text.slice(0, 120)}…` : text;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function describeExit(code: number | null, signal: NodeJS.Signals | null): string {
  return signal ? `was killed by ${signal}` : `exited with code ${code ?? 'unknown'}`;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done);
  });
}

function race<T>(promise: Promise<T>, signal: AbortSignal): Promise<T | typeof STOPPED> {
  if (signal.aborted) return Promise.resolve(STOPPED);
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve(STOPPED);
    signal.addEventListener('abort', onAbort);
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
const STOPPED = Symbol('stopped');

/**
 * A persistent plugin child speaking newline-delimited JSON on stdin/stdout (see
 * docs/plugin-authoring.md for the protocol). The child is spawned without a shell, in its own
 * process group, with an allow-listed environment and the plugin folder as cwd; it is restarted
 * after a crash up to `max_restarts` times and then disabled; on `dispose` it gets `shutdown`,
 * then SIGTERM, then SIGKILL, always to the whole group.
 */
export function createProcessImplementation(options: ProcessImplementationOptions): PluginImplementation {
  const { pluginId, manifest, pluginDir, runtime } = options;
  const logger = options.logger ?? silentLogger;
  const hostEnv = options.env ?? {};
  const maxLineBytes = options.maxLineBytes ?? MAX_PROTOCOL_LINE_BYTES;
  const graceMs = options.shutdownGraceMs ?? 1000;
  const timeoutMs = runtime.timeout_seconds * 1000;
  const lifetime = new AbortController();

  let state: LifecycleState = 'unloaded';
  let session: Session | undefined;
  let attempt: Promise<LaunchResult> | undefined;
  let lastError: string | undefined;
  let restarts = 0;
  let activeSince = 0;
  let discovered: ToolSpec[] | undefined;
  let nextId = 1;
  let healthTimer: NodeJS.Timeout | undefined;
  let healthInFlight = false;

  const protocolWarning = (message: string) => logger.warn('plugin protocol error', { plugin: pluginId, code: 'PROTOCOL_ERROR', message });

  function spawnSession(): { ok: true; session: Session } | { ok: false; message: string } {
    const expanded = expandEnvMap(runtime.env, hostEnv, `plugin ${pluginId}: [runtime.env]`);
    if (!expanded.ok) return { ok: false, message: expanded.message };
    const env = buildChildEnv(hostEnv, expanded.value);
    const resolved = resolveCommand({ pluginId, pluginDir, command: runtime.command, path: env.PATH });
    if (!resolved.ok) return { ok: false, message: resolved.message };
    const wrapped = withMemoryLimit(resolved.path, runtime.args, runtime.max_memory_mb);
    let proc: ChildProcessWithoutNullStreams;
    try {
      proc = spawn(wrapped.command, wrapped.args, {
        cwd: options.workingDir ?? pluginDir,
        env,
        detached: true,
        shell: false,
        stdio: ['pipe', 'pipe', 'pipe'],
        windowsHide: true,
      });
    } catch (error) {
      // Node refuses some arguments before spawning, e.g. a NUL byte in [runtime] args or env.
      return { ok: false, message: `plugin ${pluginId}: ${resolved.path} could not be started (${errorText(error)}); fix [runtime] command, args and env in plugin.toml` };
    }
    const stderr = new StderrRelay({ pluginId, logger });
    const s = new Session(proc, stderr);
    if (proc.pid !== undefined) trackGroup(proc.pid);
    logger.debug('plugin spawned', { plugin: pluginId, pid: proc.pid, command: resolved.path, memoryLimited: wrapped.limited });

    const splitter = new LineSplitter(maxLineBytes, (event) => {
      // A throw here would escape the stream listener and take the host down; a line is not worth that.
      try {
        if (event.kind === 'oversize') onProtocolProblem(s, `a reply line of ${event.bytes} bytes exceeds the ${maxLineBytes}-byte limit`);
        else onLine(s, event.line);
      } catch (error) {
        logger.error('process adapter failed to handle a reply line', { plugin: pluginId, error: errorText(error) });
      }
    });
    proc.stdout.on('data', (chunk: Buffer) => splitter.push(chunk));
    proc.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    proc.stdin.on('error', () => {
      // EPIPE: the child closed stdin or died; its exit tells the rest.
    });

    let exitInfo: string | undefined;
    const finalize = () => {
      stderr.flush();
      if (proc.pid !== undefined) {
        killGroup(proc.pid, 'SIGKILL');
        untrackGroup(proc.pid);
      }
      const tail = stderr.tail();
      const message = `${exitInfo ?? 'exited'}${tail ? `; stderr: ${preview(tail.slice(-400))}` : ''}`;
      s.finish(message);
      onSessionExit(s);
    };
    proc.on('error', (error: NodeJS.ErrnoException) => {
      exitInfo ??= `could not be started (${error.code ?? error.message})`;
      if (proc.pid === undefined) finalize();
    });
    proc.on('exit', (code, signal) => {
      exitInfo ??= describeExit(code, signal);
      // Grandchildren may hold the pipes open; kill the group so 'close' can follow.
      killGroup(proc.pid, 'SIGKILL');
      const grace = setTimeout(finalize, 500);
      proc.once('close', () => {
        clearTimeout(grace);
        finalize();
      });
    });
    return { ok: true, session: s };
  }

  function deliver(s: Session, id: number, reply: Reply): void {
    const p = s.pending.get(id);
    if (!p) return;
    s.pending.delete(id);
    p.resolve(reply);
  }

  /** A line that cannot be matched to a request fails the one outstanding request, if there is exactly one. */
  function onProtocolProblem(s: Session, message: string): void {
    if (s.pending.size === 1) {
      const [only] = s.pending.keys();
      deliver(s, only!, { kind: 'protocol', message });
    } else {
      protocolWarning(`${message} (${s.pending.size} requests outstanding, none blamed)`);
    }
  }

  function onLine(s: Session, line: string): void {
    if (line.length === 0 || (line.charCodeAt(0) <= 32 && line.trim() === '')) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      onProtocolProblem(s, `the plugin wrote a line that is not JSON: ${JSON.stringify(preview(line))}`);
      return;
    }
    if (!isMessage(parsed)) {
      onProtocolProblem(s, `the plugin wrote JSON that is not an object: ${preview(line)}`);
      return;
    }
    const id = parsed.id;
    if (id !== undefined) {
      if (typeof id === 'number' && s.pending.has(id)) {
        deliver(s, id, { kind: 'message', message: parsed });
      } else if (typeof id === 'number' && Number.isInteger(id) && id > 0 && id < nextId) {
        // Ids only grow, so an id below the next one that is not pending was answered or given up on.
        protocolWarning(`a late or duplicate reply for request ${id} was dropped`);
      } else {
        onProtocolProblem(s, `the plugin answered with id ${previewPluginValue(id)}, which matches no outstanding request`);
      }
      return;
    }
    if (s.echoesIds === true) {
      onProtocolProblem(s, 'the plugin echoed ids before but sent a reply without one');
      return;
    }
    const [oldest] = s.pending.keys();
    if (oldest === undefined) protocolWarning('a reply arrived while no request was outstanding (late or duplicate) and was dropped');
    else deliver(s, oldest, { kind: 'message', message: parsed });
  }

  /** Sends one request and waits for its reply, the child's exit, or `signal`. */
  async function request(s: Session, body: Message, signal: AbortSignal): Promise<Reply> {
    if (s.exited) return { kind: 'exit', message: s.exitMessage };
    const serial = s.echoesIds !== true;
    if (serial) {
      const acquired = await s.acquire(signal);
      if (!acquired) return { kind: 'stopped' };
      if (s.retired && !s.exited) {
        s.release();
        return { kind: 'retired' };
      }
      if (s.exited) {
        s.release();
        return { kind: 'exit', message: s.exitMessage };
      }
    }
    const id = nextId++;
    const replied = new Promise<Reply>((resolve) => s.pending.set(id, { id, resolve }));
    s.proc.stdin.write(`${JSON.stringify({ id, ...body })}\n`);
    const reply = await race(replied, signal);
    if (serial) s.release();
    if (reply === STOPPED) {
      s.pending.delete(id);
      return { kind: 'stopped' };
    }
    return reply;
  }

  function stopSession(s: Session): Promise<void> {
    s.retired = true;
    if (!s.exited) {
      killGroup(s.pgid, 'SIGTERM');
      const timer = setTimeout(() => killGroup(s.pgid, 'SIGKILL'), 250);
      void s.exitedPromise.then(() => clearTimeout(timer));
    }
    return s.exitedPromise;
  }

  function stopHealth(): void {
    if (healthTimer) clearInterval(healthTimer);
    healthTimer = undefined;
  }

  function startHealth(s: Session): void {
    stopHealth();
    const interval = runtime.health_check_interval_seconds * 1000;
    if (interval <= 0) return;
    healthTimer = setInterval(() => {
      healthCheck(s).catch((error: unknown) => logger.error('process adapter health check failed unexpectedly', { plugin: pluginId, error: errorText(error) }));
    }, interval);
    healthTimer.unref();
  }

  async function healthCheck(s: Session): Promise<void> {
    if (healthInFlight || state !== 'active' || session !== s || s.retired) return;
    if (s.echoesIds !== true && s.busy) return; // a call in flight on a one-at-a-time plugin
    healthInFlight = true;
    try {
      const reply = await request(s, { type: 'health_check' }, AbortSignal.timeout(timeoutMs));
      if (session !== s || s.retired || lifetime.signal.aborted) return;
      let problem: string | undefined;
      if (reply.kind === 'stopped') problem = `did not answer health_check within ${runtime.timeout_seconds} s (timeout_seconds)`;
      else if (reply.kind === 'protocol') problem = `broke the protocol in health_check: ${reply.message}`;
      else if (reply.kind === 'message' && (reply.message.type !== 'health_check_response' || reply.message.healthy === false)) {
        problem = `reported itself unhealthy (${previewPluginValue(reply.message)})`;
      }
      if (problem === undefined) return;
      lastError = `plugin ${pluginId} ${problem}`;
      logger.warn('plugin health check failed; restarting it', { plugin: pluginId, error: lastError });
      state = 'error';
      stopHealth();
      await stopSession(s);
      scheduleRestart();
    } finally {
      healthInFlight = false;
    }
  }

  async function launch(kind: 'initializing' | 'recovering'): Promise<LaunchResult> {
    state = kind;
    discovered = undefined;
    const spawned = spawnSession();
    if (!spawned.ok) return { ok: false, message: spawned.message };
    const s = spawned.session;
    session = s;
    const handshake = AbortSignal.any([AbortSignal.timeout(timeoutMs), lifetime.signal]);
    const fail = async (message: string): Promise<LaunchResult> => {
      await stopSession(s);
      return { ok: false, message };
    };
    const describe = (what: string, reply: Reply): string => {
      switch (reply.kind) {
        case 'exit':
          return `plugin ${pluginId} ${reply.message} before answering ${what}`;
        case 'protocol':
          return `plugin ${pluginId} broke the protocol in ${what}: ${reply.message}`;
        case 'stopped':
        case 'retired':
          return lifetime.signal.aborted
            ? `plugin ${pluginId} was shut down during ${what}`
            : `plugin ${pluginId} did not answer ${what} within ${runtime.timeout_seconds} s (timeout_seconds)`;
        case 'message':
          return `plugin ${pluginId} answered ${what} with ${previewPluginValue(reply.message)}`;
      }
    };

    const init = await request(s, { type: 'initialize', config: options.config ?? {} }, handshake);
    if (init.kind !== 'message' || init.message.type !== 'initialize_response' || init.message.success === false) {
      return fail(describe('initialize', init));
    }
    s.echoesIds = init.message.id !== undefined;

    const tools = await request(s, { type: 'get_tools' }, handshake);
    if (tools.kind === 'message' && tools.message.type === 'get_tools_response') {
      const found = discoveredToolSpecs(manifest, tools.message.tools);
      for (const problem of found.problems) logger.warn('plugin reported a malformed tool', { plugin: pluginId, problem });
      discovered = found.tools;
    } else if (tools.kind === 'message' && tools.message.type === 'error') {
      discovered = undefined; // get_tools is optional when the manifest declares [[tools]]
    } else {
      return fail(describe('get_tools', tools));
    }
    if (lifetime.signal.aborted || s.exited) return fail(describe('get_tools', { kind: 'exit', message: s.exitMessage || 'exited' }));
    state = 'active';
    activeSince = performance.now();
    logger.debug('plugin active', { plugin: pluginId, echoesIds: s.echoesIds, tools: discovered?.length ?? 0 });
    startHealth(s);
    return { ok: true };
  }

  function runAttempt(kind: 'initializing' | 'recovering'): Promise<LaunchResult> {
    const launched = launch(kind).catch(async (error: unknown): Promise<LaunchResult> => {
      if (session) await stopSession(session);
      return { ok: false, message: `process adapter for ${pluginId}: starting the plugin failed (${errorText(error)}); this is a bug in Trellis, please report it` };
    });
    const current: Promise<LaunchResult> = launched.then((result) => {
      if (!result.ok && !lifetime.signal.aborted) {
        lastError = result.message;
        state = 'error';
        logger.warn('plugin failed to start', { plugin: pluginId, error: result.message });
        if (attempt === current) scheduleRestart();
      }
      return result;
    });
    attempt = current;
    return current;
  }

  function scheduleRestart(): void {
    if (lifetime.signal.aborted) return;
    if (activeSince > 0 && performance.now() - activeSince > STABLE_UPTIME_MS) restarts = 0;
    activeSince = 0;
    if (!runtime.restart_on_crash || restarts >= runtime.max_restarts) {
      state = 'disabled';
      lastError = runtime.restart_on_crash
        ? `${lastError ?? 'failed'}; gave up after ${restarts} restart(s) (max_restarts = ${runtime.max_restarts})`
        : `${lastError ?? 'failed'}; not restarted (restart_on_crash = false)`;
      logger.error('plugin disabled', { plugin: pluginId, error: lastError });
      attempt = Promise.resolve({ ok: false, message: lastError });
      return;
    }
    restarts += 1;
    const waited = sleep(runtime.restart_delay_seconds * 1000, lifetime.signal);
    const current: Promise<LaunchResult> = waited.then(() => {
      if (lifetime.signal.aborted) return { ok: false, message: `plugin ${pluginId} was shut down` } as LaunchResult;
      const next = runAttempt('recovering');
      return next;
    });
    attempt = current;
  }

  function onSessionExit(s: Session): void {
    if (s.retired || session !== s || lifetime.signal.aborted) return;
    if (state === 'initializing' || state === 'recovering') return; // the launch reports it
    s.retired = true;
    lastError = `plugin ${pluginId} ${s.exitMessage}`;
    logger.warn('plugin crashed', { plugin: pluginId, error: lastError });
    state = 'error';
    stopHealth();
    scheduleRestart();
  }

  async function ensureReady(signal: AbortSignal, call: ImplementationCall): Promise<Session | ToolOutcome> {
    if (state === 'unloaded' && !lifetime.signal.aborted) void start();
    for (let round = 0; round < 4; round += 1) {
      if (lifetime.signal.aborted) return notDispatched(failOutcome('PLUGIN_UNAVAILABLE', `plugin ${pluginId} has been shut down`));
      if (state === 'disabled') {
        return notDispatched(failOutcome('PLUGIN_UNAVAILABLE', `plugin ${pluginId} is disabled: ${lastError ?? 'unknown error'}; fix it and restart the host`));
      }
      if (state === 'active' && session && !session.retired && !session.exited) return session;
      const pending = attempt;
      if (!pending) return notDispatched(failOutcome('PLUGIN_UNAVAILABLE', `plugin ${pluginId} is not running`));
      const result = await race(pending, signal);
      if (result === STOPPED) return notDispatched(stoppedOutcome(pluginId, { signal, deadlineAt: call.deadlineAt, tool: call.tool }, `waiting for the plugin to start`));
      if (!result.ok) {
        return notDispatched(failOutcome('PLUGIN_LOAD_FAILED', result.message, (state as LifecycleState) !== 'disabled'));
      }
    }
    return notDispatched(failOutcome('PLUGIN_UNAVAILABLE', `plugin ${pluginId} keeps restarting: ${lastError ?? 'unknown error'}`, true));
  }

  function reported(call: ImplementationCall, code: string, error: unknown, retryable = false): ToolOutcome {
    const valueLead = `plugin ${pluginId} broke the protocol during the call to ${call.tool}: its error value`;
    return pluginFailure({ code, error, name: `${pluginId}.${call.tool}`, valueLead, retryable });
  }

  function interpret(call: ImplementationCall, message: Message): ToolOutcome {
    if (message.type === 'error') return reported(call, 'TOOL_FAILED', message.error);
    if (message.type !== 'call_tool_response') {
      return failOutcome('PROTOCOL_ERROR', `${pluginId}.${call.tool}: expected a call_tool_response, got ${previewPluginValue(message)}`);
    }
    const failed = message.success === false || (message.success !== true && message.error !== undefined);
    if (!failed) return okOutcome(message.data === undefined ? null : message.data);
    const error = failureValueOfReply(message);
    if (isMessage(error) && typeof error.code === 'string' && /^[A-Z][A-Z0-9_]*$/.test(error.code)) {
      return reported(call, error.code, typeof error.message === 'string' ? error.message : error, error.retryable === true);
    }
    return reported(call, 'TOOL_FAILED', error);
  }

  /** `outcomeOf` for a reply handed over inside a stream listener or timer, where a throw would take the host down. */
  function settledOutcome(call: ImplementationCall, s: Session, reply: Reply, signal: AbortSignal): ToolOutcome | undefined {
    try {
      return outcomeOf(call, s, reply, signal);
    } catch (error) {
      logger.error('process adapter failed to handle a reply', { plugin: pluginId, tool: call.tool, error: errorText(error) });
      return failOutcome('INTERNAL_ERROR', `process adapter for ${pluginId}: the reply to ${call.tool} could not be handled (${errorText(error)}); this is a bug in Trellis, please report it`);
    }
  }

  /** The outcome of a call_tool reply; undefined when the session was retired before sending (try again). */
  function outcomeOf(call: ImplementationCall, s: Session, reply: Reply, signal: AbortSignal): ToolOutcome | undefined {
    switch (reply.kind) {
      case 'retired':
        return undefined;
      case 'stopped':
        if (s.echoesIds !== true && !s.retired && session === s && !lifetime.signal.aborted) recycle(s);
        return stoppedOutcome(pluginId, { signal, deadlineAt: call.deadlineAt, tool: call.tool }, 'no reply');
      case 'exit':
        if (lifetime.signal.aborted) return failOutcome('PLUGIN_UNAVAILABLE', `plugin ${pluginId} was shut down during the call to ${call.tool}`);
        return failOutcome('PLUGIN_CRASHED', `plugin ${pluginId} ${reply.message} during the call to ${call.tool}`, true);
      case 'protocol':
        return failOutcome('PROTOCOL_ERROR', `plugin ${pluginId} broke the protocol during the call to ${call.tool}: ${reply.message}`);
      case 'message':
        return interpret(call, reply.message);
    }
  }

  let sweepAt = Infinity;
  let sweepTimer: NodeJS.Timeout | undefined;

  /** One timer for every fast-path deadline, armed for the earliest; steady traffic re-arms nothing. */
  function armSweep(at: number): void {
    if (at >= sweepAt) return;
    if (sweepTimer) clearTimeout(sweepTimer);
    sweepAt = at;
    sweepTimer = setTimeout(sweep, Math.max(0, at - performance.now()));
    sweepTimer.unref();
  }

  function sweep(): void {
    sweepTimer = undefined;
    sweepAt = Infinity;
    const s = session;
    if (!s) return;
    const now = performance.now();
    let next = Infinity;
    for (const p of [...s.pending.values()]) {
      if (p.deadlineAt === undefined) continue;
      if (p.deadlineAt <= now + 1) p.expire?.();
      else next = Math.min(next, p.deadlineAt);
    }
    if (next < Infinity) armSweep(next);
  }

  /**
   * The common case, kept lean because it is the per-call overhead the benchmark measures: an
   * active plugin that echoes ids. One pending entry, one abort listener, one deadline timer.
   */
  function fastCall(s: Session, call: ImplementationCall, line: string): Promise<ToolOutcome> {
    return new Promise((resolve) => {
      const id = nextId++;
      const signal = call.signal;
      const settle = (reply: Reply) => {
        signal.removeEventListener('abort', onStop);
        resolve(settledOutcome(call, s, reply, signal) ?? failOutcome('INTERNAL_ERROR', `process adapter for ${pluginId}: a call was lost`));
      };
      function onStop() {
        if (!s.pending.delete(id)) return;
        settle({ kind: 'stopped' });
      }
      s.pending.set(id, { id, resolve: settle, deadlineAt: call.deadlineAt, expire: onStop });
      signal.addEventListener('abort', onStop);
      if (Number.isFinite(call.deadlineAt)) armSweep(call.deadlineAt);
      s.proc.stdin.write(`{"id":${id},${line}\n`);
    });
  }

  function call(call: ImplementationCall): Promise<ToolOutcome> {
    const s = session;
    if (state === 'active' && s !== undefined && s.echoesIds === true && !s.retired && !s.exited && !call.signal.aborted) {
      let line: string;
      try {
        line = `"type":"call_tool","tool_name":${JSON.stringify(call.tool)},"arguments":${JSON.stringify(call.input ?? {})}}`;
      } catch (error) {
        return Promise.resolve(failOutcome('INTERNAL_ERROR', `process adapter for ${pluginId}: the arguments cannot be sent as JSON (${error instanceof Error ? error.message : String(error)})`));
      }
      return fastCall(s, call, line);
    }
    return slowCall(call);
  }

  async function slowCall(call: ImplementationCall): Promise<ToolOutcome> {
    const stop = callStopSignal(call);
    try {
      for (let round = 0; round < 3; round += 1) {
        const ready = await ensureReady(stop.signal, call);
        if (!(ready instanceof Session)) return ready;
        const reply = await request(ready, { type: 'call_tool', tool_name: call.tool, arguments: call.input ?? {} }, stop.signal);
        const outcome = outcomeOf(call, ready, reply, stop.signal);
        if (outcome) return outcome;
      }
      return failOutcome('PLUGIN_UNAVAILABLE', `plugin ${pluginId} kept restarting during the call to ${call.tool}`, true);
    } catch (error) {
      return failOutcome('INTERNAL_ERROR', `process adapter for ${pluginId}: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      stop.dispose();
    }
  }

  /**
   * A plugin that does not echo ids cannot be resynchronized once a request went unanswered
   * (its late reply would be taken for the next call's), so it is replaced by a fresh child.
   * This is not a crash and does not count against max_restarts.
   */
  function recycle(s: Session): void {
    logger.warn('plugin left a request unanswered; restarting it to resynchronize', { plugin: pluginId });
    stopHealth();
    s.retired = true;
    state = 'recovering';
    const current = stopSession(s).then(() => (lifetime.signal.aborted ? ({ ok: false, message: `plugin ${pluginId} was shut down` } as LaunchResult) : runAttempt('recovering')));
    attempt = current;
  }

  async function start(): Promise<void> {
    if (state === 'unloaded' && !attempt && !lifetime.signal.aborted) runAttempt('initializing');
    if (attempt) await attempt;
  }

  async function dispose(): Promise<void> {
    if (lifetime.signal.aborted) {
      if (session) await session.exitedPromise;
      return;
    }
    lifetime.abort();
    stopHealth();
    state = 'unloaded';
    const s = session;
    if (!s) return;
    s.retired = true;
    if (!s.exited) {
      try {
        s.proc.stdin.write(`${JSON.stringify({ id: nextId++, type: 'shutdown' })}\n`);
        s.proc.stdin.end();
      } catch {
        // stdin already closed
      }
      await race(s.exitedPromise, AbortSignal.timeout(graceMs));
      if (!s.exited) {
        killGroup(s.pgid, 'SIGTERM');
        await race(s.exitedPromise, AbortSignal.timeout(graceMs));
      }
      if (!s.exited) killGroup(s.pgid, 'SIGKILL');
    }
    await s.exitedPromise;
  }

  return {
    pluginId,
    start,
    discoveredTools: () => discovered,
    call,
    state: () => state,
    lastError: () => lastError,
    dispose,
  };
}
