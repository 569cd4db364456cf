import { failOutcome, okOutcome, silentLogger } from '@trellis/sdk';
import type { Logger, PluginManifest, ToolOutcome } from '@trellis/sdk';
import type { ImplementationCall, PluginImplementation } from '../PluginImplementation.ts';
import { stoppedOutcome } from './callDeadline.ts';
import type { Message, Reply } from './NdjsonChannel.ts';
import { notDispatched } from './notDispatched.ts';
import { ProcessSupervisor } from './ProcessSupervisor.ts';
import type { ProcessRuntime, Session } from './ProcessSupervisor.ts';
import { pluginFailure, previewPluginValue } from './renderPluginValue.ts';
import { failureValueOfReply } from './failureValueOfReply.ts';

export type { ProcessRuntime } from './ProcessSupervisor.ts';

/** A reply line longer than this is a protocol error (10 MiB). */
export const MAX_PROTOCOL_LINE_BYTES = 10 * 1024 * 1024;

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

function isMessage(value: unknown): value is Message {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * A persistent plugin child speaking newline-delimited JSON on stdin/stdout (see
 * docs/plugin-authoring.md for the protocol), in three parts: the `NdjsonChannel` (framing,
 * ids, routing, the one deadline mechanism), the `ProcessSupervisor` (start, handshake,
 * restart, health, stop) and this thin layer, which has one call path: take the active session
 * (or wait for one within the call's deadline), send `call_tool`, turn the reply into an outcome.
 */
export function createProcessImplementation(options: ProcessImplementationOptions): PluginImplementation {
  const { pluginId } = options;
  const supervisor = new ProcessSupervisor({
    pluginId,
    manifest: options.manifest,
    pluginDir: options.pluginDir,
    ...(options.workingDir !== undefined ? { workingDir: options.workingDir } : {}),
    runtime: options.runtime,
    config: options.config,
    env: options.env ?? {},
    logger: options.logger ?? silentLogger,
    maxLineBytes: options.maxLineBytes ?? MAX_PROTOCOL_LINE_BYTES,
    graceMs: options.shutdownGraceMs ?? 1000,
  });
  const lifetime = supervisor.lifetime.signal;

  /** The active session, after waiting for a launch if need be; or the outcome that ends the call. */
  async function ready(call: ImplementationCall): Promise<Session | ToolOutcome> {
    if (supervisor.state === 'unloaded' && !lifetime.aborted) void supervisor.start();
    for (let round = 0; round < 4; round += 1) {
      if (lifetime.aborted) return notDispatched(failOutcome('PLUGIN_UNAVAILABLE', `plugin ${pluginId} has been shut down`));
      if (supervisor.state === 'disabled') {
        return notDispatched(failOutcome('PLUGIN_UNAVAILABLE', `plugin ${pluginId} is disabled: ${disabledReason(supervisor.lastError)}`));
      }
      const active = supervisor.current();
      if (active) return active;
      const pending = supervisor.attempt;
      if (!pending) return notDispatched(failOutcome('PLUGIN_UNAVAILABLE', `plugin ${pluginId} is not running`));
      const result = await raceCall(pending, call);
      if (result === STOPPED) return notDispatched(stoppedOutcome(pluginId, call, 'waiting for the plugin to start'));
      if (!result.ok) return notDispatched(failOutcome('PLUGIN_LOAD_FAILED', result.message, (supervisor.state as string) !== 'disabled'));
    }
    return notDispatched(
      failOutcome('PLUGIN_UNAVAILABLE', `plugin ${pluginId} keeps restarting: ${supervisor.lastError ?? 'unknown error'}`, true),
    );
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

  /** The outcome of a call_tool reply; undefined when the session retired before sending (try again). */
  function outcomeOf(call: ImplementationCall, reply: Reply): ToolOutcome | undefined {
    switch (reply.kind) {
      case 'retired':
        return undefined;
      case 'stopped':
        return stoppedOutcome(pluginId, call, 'no reply');
      case 'exit':
        if (lifetime.aborted) return failOutcome('PLUGIN_UNAVAILABLE', `plugin ${pluginId} was shut down during the call to ${call.tool}`);
        return failOutcome('PLUGIN_CRASHED', `plugin ${pluginId} ${reply.message} during the call to ${call.tool}`, true);
      case 'protocol':
        return failOutcome('PROTOCOL_ERROR', `plugin ${pluginId} broke the protocol during the call to ${call.tool}: ${reply.message}`);
      case 'message':
        return interpret(call, reply.message);
    }
  }

  async function call(call: ImplementationCall): Promise<ToolOutcome> {
    const body = { type: 'call_tool', tool_name: call.tool, arguments: call.input ?? {} };
    try {
      for (let round = 0; round < 3; round += 1) {
        const session = supervisor.current() ?? (await ready(call));
        if (!('channel' in session)) return session;
        const reply = await session.channel.request(body, call);
        const outcome = outcomeOf(call, reply);
        if (outcome) return outcome;
      }
      return failOutcome('PLUGIN_UNAVAILABLE', `plugin ${pluginId} kept restarting during the call to ${call.tool}`, true);
    } catch (error) {
      return failOutcome(
        'INTERNAL_ERROR',
        `process adapter for ${pluginId}: the call to ${call.tool} failed (${errorText(error)}); this is a bug in Trellis, please report it`,
      );
    }
  }

  return {
    pluginId,
    start: () => supervisor.start(),
    discoveredTools: () => supervisor.discovered,
    call,
    state: () => supervisor.state,
    lastError: () => supervisor.lastError,
    health: () => supervisor.life.report(),
    onLifecycleChange: (listener) => supervisor.life.onTransition(listener),
    checkHealth: (signal) => supervisor.checkHealthOnce(signal),
    dispose: () => supervisor.dispose(),
  };
}

/** The reason a disabled plugin gives, ending with what to do (the supervisor's own text names it when it gave up). */
function disabledReason(lastError: string | undefined): string {
  const reason = lastError ?? 'unknown error';
  return reason.endsWith('restart the host') ? reason : `${reason}; fix it and restart the host`;
}

const STOPPED = Symbol('stopped');

/** Waits for `promise`, but no longer than the call's signal and deadline allow. */
function raceCall<T>(promise: Promise<T>, call: ImplementationCall): Promise<T | typeof STOPPED> {
  if (call.signal.aborted || call.deadlineAt <= performance.now()) return Promise.resolve(STOPPED);
  return new Promise((resolve, reject) => {
    const stop = () => finish(STOPPED);
    const timer = Number.isFinite(call.deadlineAt) ? setTimeout(stop, Math.max(0, call.deadlineAt - performance.now())) : undefined;
    timer?.unref();
    call.signal.addEventListener('abort', stop, { once: true });
    function finish(value: T | typeof STOPPED) {
      if (timer) clearTimeout(timer);
      call.signal.removeEventListener('abort', stop);
      resolve(value);
    }
    promise.then(finish, (error: unknown) => {
      if (timer) clearTimeout(timer);
      call.signal.removeEventListener('abort', stop);
      reject(error);
    });
  });
}
