import { failOutcome, okOutcome, silentLogger } from '@trellis/sdk';
import { runProcess } from '@trellis/sdk/internal';
import type { Logger, PluginManifest, PluginRuntime, ToolOutcome } from '@trellis/sdk';
import type { ImplementationCall, LifecycleState, PluginImplementation } from '../PluginImplementation.ts';
import { callStopSignal, stoppedOutcome } from './callDeadline.ts';
import { notDispatched } from './notDispatched.ts';
import { buildChildEnv, expandEnvMap } from './childEnv.ts';
import { resolveCommand } from './resolveCommand.ts';

/** A manifest's `[runtime]` table for `type = "script"`, with `[plugins.entries.<id>]` overrides applied. */
export type ScriptRuntime = Extract<PluginRuntime, { type: 'script' }>;

/** Everything `createScriptImplementation` needs. */
export interface ScriptImplementationOptions {
  readonly pluginId: string;
  readonly manifest: PluginManifest;
  /** Realpath of the plugin folder: the child's cwd and the base of a relative `command`. */
  readonly pluginDir: string;
  /** The child's working folder (`[runtime] cwd`, resolved and checked); default the plugin folder. */
  readonly workingDir?: string;
  readonly runtime: ScriptRuntime;
  /** `[plugins.entries.<id>] config`, sent with every call as `config`. */
  readonly config?: Readonly<Record<string, unknown>>;
  /** The host environment: the source of the allow-listed variables and of `${VAR}` in `[runtime.env]`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly logger?: Logger;
}

/** What a script plugin reads on stdin, one JSON document per call. */
export interface ScriptRequest {
  readonly tool: string;
  readonly arguments: unknown;
  readonly config: Readonly<Record<string, unknown>>;
  readonly call_id: string;
}

const TAIL_CHARS = 1000;

function tail(text: string): string {
  const trimmed = text.trim();
  return trimmed.length > TAIL_CHARS ? `…${trimmed.slice(-TAIL_CHARS)}` : trimmed;
}

/**
 * Reads a script's stdout: a JSON object or array is the value; anything else (plain text, a
 * bare number or string) is `{ message: text }`.
 */
export function parseScriptOutput(stdout: string): unknown {
  const text = stdout.trim();
  if (text.startsWith('{') || text.startsWith('[')) {
    try {
      const parsed: unknown = JSON.parse(text);
      if (typeof parsed === 'object' && parsed !== null) return parsed;
    } catch {
      // Not JSON after all: plain text.
    }
  }
  return { message: text };
}

/**
 * A plugin run as one child per call: the call (`ScriptRequest`) as JSON on stdin, the result
 * on stdout (JSON, or plain text as `{ message }`), a non-zero exit a `TOOL_FAILED` with the tail
 * of stderr. Each child runs without a shell, in its own process group (killed when the call
 * ends), with an allow-listed environment plus `[runtime.env]` and `TRELLIS_TOOL`,
 * `TRELLIS_PLUGIN_ID`, `TRELLIS_CALL_ID`, in the plugin folder, under the call's deadline
 * (at most `timeout_seconds`), a stdout cap and, where prlimit exists, memory and CPU limits.
 */
export function createScriptImplementation(options: ScriptImplementationOptions): PluginImplementation {
  const { pluginId, pluginDir, runtime } = options;
  const logger = options.logger ?? silentLogger;
  const hostEnv = options.env ?? {};
  const lifetime = new AbortController();
  const inFlight = new Set<Promise<unknown>>();
  let state: LifecycleState = 'unloaded';
  let lastError: string | undefined;
  let prepared: { command: string; env: Record<string, string> } | undefined;

  function prepare(): void {
    if (state !== 'unloaded' && state !== 'error') return;
    const expanded = expandEnvMap(runtime.env, hostEnv, `plugin ${pluginId}: [runtime.env]`);
    if (!expanded.ok) {
      state = 'error';
      lastError = expanded.message;
      return;
    }
    const env = buildChildEnv(hostEnv, expanded.value);
    const resolved = resolveCommand({ pluginId, pluginDir, command: runtime.command, path: env.PATH });
    if (!resolved.ok) {
      state = 'error';
      lastError = resolved.message;
      return;
    }
    prepared = { command: resolved.path, env };
    state = 'active';
    lastError = undefined;
  }

  async function run(call: ImplementationCall): Promise<ToolOutcome> {
    const name = `${pluginId}.${call.tool}`;
    if (lifetime.signal.aborted) return notDispatched(failOutcome('PLUGIN_UNAVAILABLE', `plugin ${pluginId} has been shut down`));
    prepare();
    if (!prepared) return notDispatched(failOutcome('PLUGIN_LOAD_FAILED', lastError ?? `plugin ${pluginId} could not be prepared`));
    const stop = callStopSignal(call);
    const signal = AbortSignal.any([stop.signal, lifetime.signal]);
    try {
      const remaining = call.deadlineAt - performance.now();
      const limitMs = runtime.timeout_seconds * 1000;
      const timeoutMs = Math.max(1, Math.min(limitMs, Number.isFinite(remaining) ? remaining : limitMs));
      const request: ScriptRequest = { tool: call.tool, arguments: call.input ?? {}, config: options.config ?? {}, call_id: call.callId };
      logger.debug('script plugin call', { plugin: pluginId, tool: call.tool, callId: call.callId });
      const result = await runProcess({
        command: prepared.command,
        args: runtime.args,
        cwd: options.workingDir ?? pluginDir,
        env: { ...prepared.env, TRELLIS_TOOL: call.tool, TRELLIS_PLUGIN_ID: pluginId, TRELLIS_CALL_ID: call.callId },
        stdin: `${JSON.stringify(request)}\n`,
        timeoutMs,
        maxOutputBytes: runtime.max_output_bytes,
        signal,
        ...(runtime.max_memory_mb === undefined ? {} : { maxMemoryMb: runtime.max_memory_mb }),
        maxCpuSeconds: Math.ceil(runtime.timeout_seconds),
      });
      if (result.stderr.trim() !== '') logger.debug('plugin stderr', { plugin: pluginId, callId: call.callId, line: tail(result.stderr) });
      if (result.spawnError === 'SPAWN_HELPER_LOST') {
        // The spawn helper was lost after it took the request: the script may have run, so the
        // call is not offered for another try as one that never started.
        return failOutcome('PLUGIN_CRASHED', `plugin ${pluginId}: ${result.stderr}`);
      }
      if (result.spawnError !== undefined) {
        return notDispatched(
          failOutcome('PLUGIN_LOAD_FAILED', `plugin ${pluginId}: ${prepared.command} could not be started (${result.spawnError})`),
        );
      }
      if (lifetime.signal.aborted)
        return failOutcome('PLUGIN_UNAVAILABLE', `plugin ${pluginId} was shut down during the call to ${call.tool}`);
      if (result.aborted)
        return stoppedOutcome(pluginId, { signal: stop.signal, deadlineAt: call.deadlineAt, tool: call.tool }, 'script still running');
      if (result.timedOut) {
        return failOutcome(
          'TIMEOUT',
          `${name} did not finish within ${Math.round(timeoutMs)} ms and was killed; raise timeout_seconds in [runtime] or make the script faster`,
          true,
        );
      }
      if (result.stdoutTruncated) {
        return failOutcome(
          'OUTPUT_TOO_LARGE',
          `${name} wrote more than ${runtime.max_output_bytes} bytes to stdout (max_output_bytes); write less or raise the cap`,
        );
      }
      if (result.exitCode !== 0) {
        const how = result.signal ? `was killed by ${result.signal}` : `exited with code ${result.exitCode}`;
        const stderr = tail(result.stderr);
        return failOutcome('TOOL_FAILED', `${name} ${how}${stderr ? `: ${stderr}` : ' (no stderr)'}`);
      }
      return okOutcome(parseScriptOutput(result.stdout));
    } finally {
      stop.dispose();
    }
  }

  return {
    pluginId,
    async start() {
      prepare();
    },
    discoveredTools: () => undefined,
    async call(call) {
      const pending = run(call).catch((error: unknown) =>
        failOutcome('INTERNAL_ERROR', `script adapter for ${pluginId}: ${error instanceof Error ? error.message : String(error)}`),
      );
      inFlight.add(pending);
      try {
        return await pending;
      } finally {
        inFlight.delete(pending);
      }
    },
    state: () => state,
    lastError: () => lastError,
    async dispose() {
      lifetime.abort();
      state = 'unloaded';
      await Promise.all([...inFlight]);
    },
  };
}
