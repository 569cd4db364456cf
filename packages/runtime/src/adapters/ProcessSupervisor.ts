import { LifecycleMachine, STABLE_UPTIME_MS, prepareChildLauncher, startChild } from '@trellis/sdk/internal';
import type { Logger, PluginManifest, PluginRuntime, ToolSpec } from '@trellis/sdk';
import type { LaunchedChild, StartedChild } from '@trellis/sdk/internal';
import type { LifecycleState } from '../PluginImplementation.ts';
import { buildChildEnv, expandEnvMap } from './childEnv.ts';
import { NdjsonChannel } from './NdjsonChannel.ts';
import type { Reply } from './NdjsonChannel.ts';
import { killGroup, untrackGroup, waitForGroupGone } from './processGroups.ts';
import { previewPluginValue } from './renderPluginValue.ts';
import { resolveCommand } from './resolveCommand.ts';
import { StderrRelay } from './StderrRelay.ts';
import { discoveredToolSpecs } from './toolSpecs.ts';
import { sleep } from './sleep.ts';

/** A manifest's `[runtime]` table for `type = "process"`, with `[plugins.entries.<id>]` overrides applied. */
export type ProcessRuntime = Extract<PluginRuntime, { type: 'process' }>;

/** What the supervisor needs. */
export interface ProcessSupervisorOptions {
  readonly pluginId: string;
  readonly manifest: PluginManifest;
  readonly pluginDir: string;
  /** The child's working folder (`[runtime] cwd`); default the plugin folder. */
  readonly workingDir?: string;
  readonly runtime: ProcessRuntime;
  readonly config?: Readonly<Record<string, unknown>> | undefined;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly logger: Logger;
  readonly maxLineBytes: number;
  /** Wait after `shutdown` (end of input) before SIGTERM, and after SIGTERM before SIGKILL. */
  readonly graceMs: number;
}

/**
 * How a launch ended. `notCounted`: it failed for a reason of Trellis's own (the spawn helper was
 * lost), so the restart that follows does not count against `max_restarts`.
 */
type LaunchResult = { readonly ok: true } | { readonly ok: false; readonly message: string; readonly notCounted?: true };

/** One run of the child: its process, its channel, and how it ended. */
export class Session {
  exited = false;
  /** Set when the supervisor ends this child on purpose: its exit is not a crash. */
  stopping = false;
  /** Set when the child ended with the spawn helper that started it: Trellis's loss, not a crash. */
  lostWithHelper = false;
  exitMessage = '';
  readonly exitedPromise: Promise<void>;
  #markExited!: () => void;

  constructor(
    readonly proc: StartedChild,
    readonly channel: NdjsonChannel,
  ) {
    this.exitedPromise = new Promise((resolve) => {
      this.#markExited = resolve;
    });
  }

  get pgid(): number | undefined {
    return this.proc.pid;
  }

  /** True while it takes new requests. */
  get usable(): boolean {
    return !this.exited && !this.channel.retired;
  }

  finish(message: string): void {
    if (this.exited) return;
    this.exited = true;
    this.exitMessage = message;
    this.channel.close(message);
    this.#markExited();
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function preview(text: string): string {
  return text.length > 120 ? `${text.slice(0, 120)}…` : text;
}

function describeExit(code: number | null, signal: NodeJS.Signals | null): string {
  return signal ? `was killed by ${signal}` : `exited with code ${code ?? 'unknown'}`;
}

/** Resolves when `promise` settles or `ms` pass, whichever is first. */
function within(promise: Promise<void>, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    void promise.then(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/**
 * Keeps one plugin child running: spawns it (no shell, own process group, allow-listed
 * environment, plugin folder as cwd), runs the handshake (`initialize`, `get_tools`) under
 * `handshake_timeout_seconds`, health-checks it under `health_check_timeout_seconds`, restarts
 * it after a crash up to `max_restarts` times, replaces a child whose stream went out of sync
 * (not counted as a crash), and stops it: `shutdown` and end of input, then SIGTERM, then
 * SIGKILL, always to the whole group.
 */
export class ProcessSupervisor {
  /** The lifecycle record: state, last error, restarts, last health check, transitions. */
  readonly life: LifecycleMachine;
  discovered: ToolSpec[] | undefined;
  /** The current session, when there is one. */
  session: Session | undefined;
  /** The launch in progress, or the last one's result. */
  attempt: Promise<LaunchResult> | undefined;
  readonly lifetime = new AbortController();
  readonly #o: ProcessSupervisorOptions;
  readonly #handshakeMs: number;
  readonly #healthMs: number;
  /** The setting each deadline came from, named in messages. */
  readonly #handshakeKey: string;
  readonly #healthKey: string;
  readonly #draining = new Set<Session>();
  #activeSince = 0;
  #healthTimer: NodeJS.Timeout | undefined;
  #healthInFlight = false;
  /** Sessions stopped before dispose: dispose waits until their groups are gone too. */
  readonly #stopped = new Set<Session>();

  constructor(options: ProcessSupervisorOptions) {
    this.#o = options;
    const rt = options.runtime;
    this.life = new LifecycleMachine({
      plugin: options.pluginId,
      maxRestarts: rt.restart_on_crash ? rt.max_restarts : 0,
      logger: options.logger,
    });
    this.#handshakeMs = (rt.handshake_timeout_seconds ?? rt.timeout_seconds) * 1000;
    this.#handshakeKey = rt.handshake_timeout_seconds === undefined ? 'timeout_seconds' : 'handshake_timeout_seconds';
    this.#healthMs = (rt.health_check_timeout_seconds ?? rt.timeout_seconds) * 1000;
    this.#healthKey = rt.health_check_timeout_seconds === undefined ? 'timeout_seconds' : 'health_check_timeout_seconds';
  }

  get state(): LifecycleState {
    return this.life.state;
  }

  set state(to: LifecycleState) {
    this.life.moveTo(to);
  }

  get lastError(): string | undefined {
    return this.life.lastError;
  }

  set lastError(message: string | undefined) {
    this.life.lastError = message;
  }

  /** The session to send a call to right now, if one is active. The hot path. */
  current(): Session | undefined {
    const s = this.session;
    return this.state === 'active' && s !== undefined && s.usable ? s : undefined;
  }

  /** Starts the child if it never ran; resolves when the current launch settles. */
  async start(): Promise<void> {
    if (this.state === 'unloaded' && !this.attempt && !this.lifetime.signal.aborted) void this.#runAttempt('initializing');
    if (this.attempt) await this.attempt;
  }

  #warn(message: string): void {
    this.#o.logger.warn('plugin protocol error', { plugin: this.#o.pluginId, code: 'PROTOCOL_ERROR', message });
  }

  async #spawn(): Promise<{ ok: true; session: Session } | { ok: false; message: string; notCounted?: true }> {
    const { pluginId, pluginDir, runtime, env: hostEnv, logger } = this.#o;
    const expanded = expandEnvMap(runtime.env, hostEnv, `plugin ${pluginId}: [runtime.env]`);
    if (!expanded.ok) return { ok: false, message: expanded.message };
    const env = buildChildEnv(hostEnv, expanded.value);
    const resolved = resolveCommand({ pluginId, pluginDir, command: runtime.command, path: env.PATH });
    if (!resolved.ok) return { ok: false, message: resolved.message };
    // The one launcher: own process group, a private /proc where available (no host secrets),
    // prlimit caps; it tracks the group for the exit safety net. In a long-running host the fork
    // happens in the spawn helper, off this thread.
    let launched: LaunchedChild<StartedChild>;
    try {
      launched = await startChild({
        command: resolved.path,
        args: runtime.args,
        cwd: this.#o.workingDir ?? pluginDir,
        env,
        ...(runtime.max_memory_mb === undefined ? {} : { maxMemoryMb: runtime.max_memory_mb }),
      });
    } catch (error) {
      if ((error as { code?: unknown }).code === 'SPAWN_HELPER_LOST') {
        return { ok: false, message: `plugin ${pluginId}: ${errorText(error)}; it is started again`, notCounted: true };
      }
      // Node refuses some arguments before spawning, e.g. a NUL byte in [runtime] args or env.
      return {
        ok: false,
        message: `plugin ${pluginId}: ${resolved.path} could not be started (${errorText(error)}); fix [runtime] command, args and env in plugin.toml`,
      };
    }
    const proc = launched.child;
    const stderr = new StderrRelay({ pluginId, logger });
    const channel = new NdjsonChannel({
      input: proc.stdin,
      maxLineBytes: this.#o.maxLineBytes,
      onWarning: (message) => this.#warn(message),
      onDesync: (reason) => this.#onDesync(s, reason),
      onIdle: () => {
        if (this.#draining.has(s)) void this.#stopSession(s);
      },
    });
    const s = new Session(proc, channel);
    logger.debug('plugin spawned', {
      plugin: pluginId,
      pid: proc.pid,
      command: resolved.path,
      memoryLimited: launched.limits.memory,
      isolated: launched.isolated,
    });

    proc.stdout.on('data', (chunk: Buffer) => {
      // A throw here would escape the stream listener and take the host down; a line is not worth that.
      try {
        channel.push(chunk);
      } catch (error) {
        logger.error('process adapter failed to handle a reply line', { plugin: pluginId, error: errorText(error) });
      }
    });
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
      s.finish(`${exitInfo ?? 'exited'}${tail ? `; stderr: ${preview(tail.slice(-400))}` : ''}`);
      this.#draining.delete(s);
      this.#onSessionExit(s);
    };
    proc.on('error', (error: NodeJS.ErrnoException) => {
      exitInfo ??= `could not be started (${error.code ?? error.message})`;
      if (proc.pid === undefined) finalize();
    });
    proc.on('exit', (code, signal) => {
      if (proc.lostWithHelper !== undefined) {
        s.lostWithHelper = true;
        exitInfo ??= `was stopped because ${proc.lostWithHelper} (not the plugin's fault; it is started again)`;
      }
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

  /** SIGTERM to the group, SIGKILL after the grace period; resolves when the child is gone. */
  #stopSession(s: Session): Promise<void> {
    this.#stopped.add(s);
    s.stopping = true;
    s.channel.retire();
    if (!s.exited) {
      killGroup(s.pgid, 'SIGTERM');
      const timer = setTimeout(() => killGroup(s.pgid, 'SIGKILL'), Math.min(this.#o.graceMs, 250));
      void s.exitedPromise.then(() => clearTimeout(timer));
    }
    // The leader's exit is not the end of its group (the exit handler SIGKILLs the rest).
    return s.exitedPromise.then(() => waitForGroupGone(s.pgid));
  }

  /** The stream went out of sync: new work goes to a fresh child, this one ends when idle. */
  #onDesync(s: Session, reason: string): void {
    if (this.lifetime.signal.aborted || s.exited) return;
    this.#o.logger.warn('plugin stream out of sync; starting a fresh child', { plugin: this.#o.pluginId, reason });
    s.stopping = true;
    if (s.channel.outstanding === 0) void this.#stopSession(s);
    else this.#draining.add(s);
    // During a launch the launch itself reports the failure; only an active child is replaced here.
    if (this.session !== s || this.state !== 'active') return;
    this.#stopHealth();
    this.state = 'recovering';
    void this.#runAttempt('recovering');
  }

  #stopHealth(): void {
    if (this.#healthTimer) clearInterval(this.#healthTimer);
    this.#healthTimer = undefined;
  }

  #startHealth(s: Session): void {
    this.#stopHealth();
    const interval = this.#o.runtime.health_check_interval_seconds * 1000;
    if (interval <= 0) return;
    this.#healthTimer = setInterval(() => {
      this.#healthCheck(s).catch((error: unknown) =>
        this.#o.logger.error('process adapter health check failed unexpectedly', { plugin: this.#o.pluginId, error: errorText(error) }),
      );
    }, interval);
    this.#healthTimer.unref();
  }

  /** One `health_check` now, for `trellis doctor`: reports only, never restarts. */
  async checkHealthOnce(signal: AbortSignal): Promise<{ healthy: boolean; message?: string }> {
    const s = this.session;
    if (!s || this.state !== 'active' || !s.usable) return { healthy: false, message: this.lastError ?? `not running (${this.state})` };
    const reply = await s.channel.request({ type: 'health_check' }, { deadlineAt: performance.now() + this.#healthMs, signal });
    if (reply.kind === 'stopped')
      return { healthy: false, message: `did not answer health_check within ${this.#healthMs / 1000} s (${this.#healthKey})` };
    if (reply.kind === 'exit' || reply.kind === 'retired') return { healthy: false, message: 'exited during health_check' };
    if (reply.kind === 'protocol') return { healthy: false, message: `broke the protocol in health_check: ${reply.message}` };
    if (reply.message.type !== 'health_check_response' || reply.message.healthy === false) {
      return { healthy: false, message: `reported itself unhealthy (${previewPluginValue(reply.message)})` };
    }
    return { healthy: true };
  }

  async #healthCheck(s: Session): Promise<void> {
    if (this.#healthInFlight || this.state !== 'active' || this.session !== s || !s.usable) return;
    if (s.channel.echoesIds !== true && s.channel.outstanding > 0) return; // a call in flight on a one-at-a-time plugin
    this.#healthInFlight = true;
    try {
      const reply = await s.channel.request(
        { type: 'health_check' },
        { deadlineAt: performance.now() + this.#healthMs, signal: this.lifetime.signal },
      );
      if (this.session !== s || this.lifetime.signal.aborted || reply.kind === 'exit' || reply.kind === 'retired') return; // the exit handler takes over
      let problem: string | undefined;
      if (reply.kind === 'stopped') problem = `did not answer health_check within ${this.#healthMs / 1000} s (${this.#healthKey})`;
      else if (reply.kind === 'protocol') problem = `broke the protocol in health_check: ${reply.message}`;
      else if (reply.message.type !== 'health_check_response' || reply.message.healthy === false) {
        problem = `reported itself unhealthy (${previewPluginValue(reply.message)})`;
      }
      if (problem === undefined) {
        this.life.recordHealthCheck(true);
        return;
      }
      this.lastError = `plugin ${this.#o.pluginId} ${problem}`;
      this.life.recordHealthCheck(false, this.lastError);
      this.#o.logger.warn('plugin health check failed; restarting it', { plugin: this.#o.pluginId, error: this.lastError });
      this.state = 'error';
      this.#stopHealth();
      await this.#stopSession(s);
      this.#scheduleRestart();
    } finally {
      this.#healthInFlight = false;
    }
  }

  async #launch(kind: 'initializing' | 'recovering'): Promise<LaunchResult> {
    const { pluginId, manifest, logger } = this.#o;
    this.state = kind;
    this.discovered = undefined;
    await prepareChildLauncher();
    const spawned = await this.#spawn();
    if (!spawned.ok) return spawned;
    const s = spawned.session;
    this.session = s;
    const limits = { deadlineAt: performance.now() + this.#handshakeMs, signal: this.lifetime.signal };
    const fail = async (message: string): Promise<LaunchResult> => {
      await this.#stopSession(s);
      // A child that died with the spawn helper during its handshake did not fail of itself.
      return s.lostWithHelper ? { ok: false, message, notCounted: true } : { ok: false, message };
    };
    const describe = (what: string, reply: Reply): string => {
      switch (reply.kind) {
        case 'exit':
          return `plugin ${pluginId} ${reply.message} before answering ${what}`;
        case 'protocol':
          return `plugin ${pluginId} broke the protocol in ${what}: ${reply.message}`;
        case 'stopped':
        case 'retired':
          return this.lifetime.signal.aborted
            ? `plugin ${pluginId} was shut down during ${what}`
            : `plugin ${pluginId} did not answer ${what} within ${this.#handshakeMs / 1000} s (${this.#handshakeKey})`;
        case 'message':
          return `plugin ${pluginId} answered ${what} with ${previewPluginValue(reply.message)}`;
      }
    };

    const init = await s.channel.request({ type: 'initialize', config: this.#o.config ?? {} }, limits);
    if (init.kind !== 'message' || init.message.type !== 'initialize_response' || init.message.success === false) {
      return fail(describe('initialize', init));
    }
    s.channel.echoesIds = init.message.id !== undefined;

    const tools = await s.channel.request({ type: 'get_tools' }, limits);
    if (tools.kind === 'message' && tools.message.type === 'get_tools_response') {
      const found = discoveredToolSpecs(manifest, tools.message.tools);
      for (const problem of found.problems) logger.warn('plugin reported a malformed tool', { plugin: pluginId, problem });
      this.discovered = found.tools;
    } else if (tools.kind === 'message' && tools.message.type === 'error') {
      this.discovered = undefined; // get_tools is optional when the manifest declares [[tools]]
    } else {
      return fail(describe('get_tools', tools));
    }
    if (this.lifetime.signal.aborted || !s.usable) return fail(describe('get_tools', { kind: 'exit', message: s.exitMessage || 'exited' }));
    this.state = 'active';
    this.#activeSince = performance.now();
    logger.debug('plugin active', { plugin: pluginId, echoesIds: s.channel.echoesIds, tools: this.discovered?.length ?? 0 });
    this.#startHealth(s);
    return { ok: true };
  }

  #runAttempt(kind: 'initializing' | 'recovering'): Promise<LaunchResult> {
    const launched = this.#launch(kind).catch(async (error: unknown): Promise<LaunchResult> => {
      if (this.session) await this.#stopSession(this.session);
      return {
        ok: false,
        message: `process adapter for ${this.#o.pluginId}: starting the plugin failed (${errorText(error)}); this is a bug in Trellis, please report it`,
      };
    });
    const current: Promise<LaunchResult> = launched.then((result) => {
      if (!result.ok && !this.lifetime.signal.aborted) {
        this.lastError = result.message;
        this.state = 'error';
        this.#o.logger.warn('plugin failed to start', { plugin: this.#o.pluginId, error: result.message });
        if (this.attempt === current) this.#scheduleRestart(result.notCounted !== true);
      }
      return result;
    });
    this.attempt = current;
    return current;
  }

  /** `counted`: false when the child ended for a reason of Trellis's own, not the plugin's. */
  #scheduleRestart(counted = true): void {
    if (this.lifetime.signal.aborted) return;
    const rt = this.#o.runtime;
    if (this.#activeSince > 0 && performance.now() - this.#activeSince > STABLE_UPTIME_MS) this.life.restarts = 0;
    this.#activeSince = 0;
    if (counted && (!rt.restart_on_crash || this.life.restarts >= rt.max_restarts)) {
      this.lastError = rt.restart_on_crash
        ? `${this.lastError ?? 'failed'}; gave up after ${this.life.restarts} restart(s) (max_restarts = ${rt.max_restarts}); fix the plugin or raise [plugins.entries.${this.#o.pluginId}] max_restarts, then restart the host`
        : `${this.lastError ?? 'failed'}; not restarted (restart_on_crash = false)`;
      this.state = 'disabled';
      this.#o.logger.error('plugin disabled', { plugin: this.#o.pluginId, error: this.lastError });
      this.attempt = Promise.resolve({ ok: false, message: this.lastError });
      return;
    }
    if (counted) this.life.restarts += 1;
    const current: Promise<LaunchResult> = sleep(rt.restart_delay_seconds * 1000, this.lifetime.signal).then(() =>
      this.lifetime.signal.aborted
        ? ({ ok: false, message: `plugin ${this.#o.pluginId} was shut down` } as LaunchResult)
        : this.#runAttempt('recovering'),
    );
    this.attempt = current;
  }

  #onSessionExit(s: Session): void {
    if (s.stopping || this.session !== s || this.lifetime.signal.aborted) return;
    if (this.state === 'initializing' || this.state === 'recovering') return; // the launch reports it
    this.lastError = `plugin ${this.#o.pluginId} ${s.exitMessage}`;
    this.#o.logger.warn(s.lostWithHelper ? 'plugin stopped with the spawn helper' : 'plugin crashed', {
      plugin: this.#o.pluginId,
      error: this.lastError,
    });
    this.state = 'error';
    this.#stopHealth();
    this.#scheduleRestart(!s.lostWithHelper);
  }

  /**
   * Stops every child: `shutdown` and end of input, then after the grace period SIGTERM to the
   * group, then SIGKILL. Resolves when all are gone.
   */
  async dispose(): Promise<void> {
    if (!this.lifetime.signal.aborted) {
      this.lifetime.abort();
      this.#stopHealth();
      this.state = 'unloaded';
    }
    // Draining sessions, the current one, and any whose leader exited but whose group may linger.
    const sessions = [...new Set([...this.#draining, ...this.#stopped, ...(this.session ? [this.session] : [])])];
    await Promise.all(sessions.map((s) => this.#shutdown(s)));
    // A launch whose child was being started (by the spawn helper) as this began sees the abort
    // and stops that child itself.
    await this.attempt?.catch(() => undefined);
  }

  async #shutdown(s: Session): Promise<void> {
    if (s.exited) return waitForGroupGone(s.pgid);
    const grace = this.#o.graceMs;
    s.channel.end({ type: 'shutdown' });
    await within(s.exitedPromise, grace);
    if (!s.exited) {
      killGroup(s.pgid, 'SIGTERM');
      await within(s.exitedPromise, grace);
    }
    if (!s.exited) killGroup(s.pgid, 'SIGKILL');
    await s.exitedPromise;
    await waitForGroupGone(s.pgid);
  }
}
