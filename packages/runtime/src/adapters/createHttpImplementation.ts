import { failOutcome, okOutcome, silentLogger } from '@trellis/sdk';
import { LifecycleMachine, STABLE_UPTIME_MS } from '@trellis/sdk/internal';
import type { Logger, PluginManifest, PluginRuntime, ToolOutcome, ToolSpec } from '@trellis/sdk';
import type { ImplementationCall, PluginImplementation } from '../PluginImplementation.ts';
import { callStopSignal, stoppedOutcome } from './callDeadline.ts';
import { expandEnvMap } from './childEnv.ts';
import { disabledImplementation } from './disabledImplementation.ts';
import { notDispatched } from './notDispatched.ts';
import { pluginFailure } from './renderPluginValue.ts';
import { discoveredToolSpecs, manifestToolSpecs } from './toolSpecs.ts';
import { failureValueOfReply } from './failureValueOfReply.ts';
import { sleep } from './sleep.ts';

/** A manifest's `[runtime]` table for `type = "http"`. */
export type HttpRuntime = Extract<PluginRuntime, { type: 'http' }>;

/** Everything `createHttpImplementation` needs. */
export interface HttpImplementationOptions {
  readonly pluginId: string;
  readonly manifest: PluginManifest;
  readonly runtime: HttpRuntime;
  /** `[plugins.entries.<id>] config`, sent in `POST /initialize {config}`. */
  readonly config?: Readonly<Record<string, unknown>>;
  /** The host environment, for `${VAR}` in `[runtime] headers`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly logger?: Logger;
  /**
   * Seconds between `GET /health` checks; 0 or absent = off. With checks on, a failed check puts
   * the plugin in `error`, calls fail fast (`PLUGIN_UNAVAILABLE`) and it is initialized again
   * with backoff (`recovering`) until it answers (`active`) or `maxRestarts` is spent (`disabled`).
   */
  readonly healthCheckIntervalSeconds?: number;
  /** Re-initializations after failed health checks before the plugin is disabled; default 3. */
  readonly maxRestarts?: number;
  /** First wait before re-initializing; doubles per failed attempt, up to 60 s. Default 1 s. */
  readonly restartDelaySeconds?: number;
}

/** Longest wait between two re-initializations of an HTTP plugin. */
const MAX_RECOVERY_DELAY_MS = 60_000;

/** Same-origin redirects followed per request; one to another origin is refused. */
const MAX_REDIRECTS = 3;

function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase();
  if (host === 'localhost' || host === '[::1]') return true;
  const v4 = /^127\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  return v4 !== null && v4.slice(1).every((octet) => Number(octet) <= 255);
}

/**
 * Checks an HTTP plugin endpoint before anything is sent: `https://` anywhere, `http://` only to
 * loopback (127.0.0.0/8, ::1, localhost), no credentials in the URL.
 */
export function checkHttpEndpoint(pluginId: string, endpoint: string): { ok: true; url: URL } | { ok: false; message: string } {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return { ok: false, message: `plugin ${pluginId}: [runtime] endpoint ${JSON.stringify(endpoint)} is not a URL` };
  }
  if (url.username !== '' || url.password !== '') {
    return {
      ok: false,
      message: `plugin ${pluginId}: [runtime] endpoint must not carry credentials; put them in [runtime] headers with \${VAR}`,
    };
  }
  if (url.protocol === 'https:') return { ok: true, url };
  if (url.protocol === 'http:' && isLoopbackHost(url.hostname)) return { ok: true, url };
  if (url.protocol === 'http:') {
    return {
      ok: false,
      message: `plugin ${pluginId}: [runtime] endpoint ${url.origin} uses plain http to a host that is not loopback; use https:// (plain http is allowed only for 127.0.0.0/8, ::1 and localhost)`,
    };
  }
  return { ok: false, message: `plugin ${pluginId}: [runtime] endpoint must be an http:// or https:// URL, not ${url.protocol}` };
}

type Exchange =
  | { readonly kind: 'response'; readonly status: number; readonly body: string }
  | { readonly kind: 'network'; readonly message: string; readonly refused: boolean }
  | { readonly kind: 'timeout' }
  | { readonly kind: 'stopped' }
  | { readonly kind: 'oversize'; readonly bytes: number }
  | { readonly kind: 'redirect'; readonly target: string };

function errorCause(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
}

function bodyError(body: string): string {
  try {
    const parsed = JSON.parse(body) as { error?: unknown; message?: unknown };
    if (typeof parsed.error === 'string') return parsed.error;
    if (typeof parsed.message === 'string') return parsed.message;
  } catch {
    // not JSON
  }
  const text = body.trim();
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

/**
 * A plugin served over HTTP: `POST /initialize {config}`, `GET /tools`, `POST /tools/{name}` with
 * the arguments as the body, `GET /health`. After a connection error, a timeout or a 5xx the next
 * call initializes again first; a 4xx does not. Redirects are followed only within the endpoint's
 * origin; bodies are read up to `max_response_bytes`. An insecure endpoint is refused here,
 * before any request: the implementation is `disabled` and every call is `INSECURE_ENDPOINT`.
 */
export function createHttpImplementation(options: HttpImplementationOptions): PluginImplementation {
  const { pluginId, manifest, runtime } = options;
  const logger = options.logger ?? silentLogger;
  const checked = checkHttpEndpoint(pluginId, runtime.endpoint);
  const headers = expandEnvMap(runtime.headers, options.env ?? {}, `plugin ${pluginId}: [runtime] headers`);
  if (!checked.ok || !headers.ok) {
    const [code, message] = !checked.ok
      ? ['INSECURE_ENDPOINT', checked.message]
      : ['PLUGIN_LOAD_FAILED', (headers as { message: string }).message];
    return disabledImplementation(pluginId, code, message);
  }
  const headerValues = headers.value;
  const base = checked.url;
  const lifetime = new AbortController();
  const timeoutMs = runtime.timeout_seconds * 1000;
  const maxRestarts = options.maxRestarts ?? 3;
  const life = new LifecycleMachine({ plugin: pluginId, maxRestarts, logger });
  const monitored = (options.healthCheckIntervalSeconds ?? 0) > 0;
  let recoveryTimer: NodeJS.Timeout | undefined;
  let recoverAt = 0;
  let activeSince = 0;
  let initialized = false;
  let initializing: Promise<ToolOutcome | undefined> | undefined;
  let discovered: ToolSpec[] | undefined;
  let healthTimer: NodeJS.Timeout | undefined;
  const declared = new Map(manifestToolSpecs(manifest).map((t) => [t.name, t]));

  function urlFor(path: string): URL {
    const url = new URL(base.href);
    url.pathname = `${base.pathname.replace(/\/+$/, '')}${path}`;
    url.search = '';
    return url;
  }

  function markBroken(reason: string): void {
    initialized = false;
    if (life.state === 'disabled') return;
    life.lastError = reason;
    if (life.state !== 'unloaded') life.moveTo('error');
  }

  /** One HTTP exchange with the plugin, bounded by `timeout_seconds`, `signal` and the size cap. */
  async function exchange(method: 'GET' | 'POST', path: string, body: unknown, signal: AbortSignal): Promise<Exchange> {
    const own = AbortSignal.timeout(timeoutMs);
    const combined = AbortSignal.any([signal, own, lifetime.signal]);
    let url = urlFor(path);
    try {
      for (let hop = 0; ; hop += 1) {
        const response = await fetch(url, {
          method,
          headers: { ...headerValues, accept: 'application/json', ...(method === 'POST' ? { 'content-type': 'application/json' } : {}) },
          ...(method === 'POST' ? { body: JSON.stringify(body ?? {}) } : {}),
          redirect: 'manual',
          signal: combined,
        });
        if (response.status >= 300 && response.status < 400 && response.headers.has('location')) {
          await response.body?.cancel();
          const target = new URL(response.headers.get('location') ?? '', url);
          if (target.origin !== base.origin || hop >= MAX_REDIRECTS) return { kind: 'redirect', target: target.href };
          url = target;
          continue;
        }
        const declaredLength = Number(response.headers.get('content-length') ?? '0');
        if (declaredLength > runtime.max_response_bytes) {
          await response.body?.cancel();
          return { kind: 'oversize', bytes: declaredLength };
        }
        const chunks: Uint8Array[] = [];
        let bytes = 0;
        if (response.body) {
          const reader = response.body.getReader();
          for (;;) {
            const { done, value } = await reader.read();
            if (done) break;
            bytes += value.byteLength;
            if (bytes > runtime.max_response_bytes) {
              await reader.cancel();
              return { kind: 'oversize', bytes };
            }
            chunks.push(value);
          }
        }
        return { kind: 'response', status: response.status, body: Buffer.concat(chunks).toString('utf8') };
      }
    } catch (error) {
      if (signal.aborted || lifetime.signal.aborted) return { kind: 'stopped' };
      if (own.aborted) return { kind: 'timeout' };
      const cause = errorCause(error);
      return { kind: 'network', message: `could not reach ${url.origin} (${cause})`, refused: cause === 'ECONNREFUSED' };
    }
  }

  /** Runs `POST /initialize` and `GET /tools` once per (re)start; concurrent callers share it. */
  function ensureInitialized(signal: AbortSignal): Promise<ToolOutcome | undefined> {
    if (initialized) return Promise.resolve(undefined);
    if (life.state === 'disabled') return Promise.resolve(failOutcome('PLUGIN_UNAVAILABLE', disabledMessage()));
    initializing ??= (async () => {
      life.moveTo(life.state === 'unloaded' ? 'initializing' : 'recovering');
      const init = await exchange('POST', '/initialize', { config: options.config ?? {} }, AbortSignal.any([signal, lifetime.signal]));
      const failed = (code: string, message: string, retryable: boolean): ToolOutcome => {
        markBroken(message);
        logger.warn('http plugin failed to initialize', { plugin: pluginId, error: message });
        return failOutcome(code, message, retryable);
      };
      if (init.kind !== 'response' || init.status < 200 || init.status >= 300) {
        switch (init.kind) {
          case 'response':
            return failed(
              'HTTP_ERROR',
              `plugin ${pluginId}: POST /initialize answered ${init.status}: ${bodyError(init.body)}`,
              init.status >= 500,
            );
          case 'network':
            return failed('HTTP_ERROR', `plugin ${pluginId}: POST /initialize ${init.message}`, true);
          case 'timeout':
            return failed('HTTP_ERROR', `plugin ${pluginId}: POST /initialize did not answer within ${runtime.timeout_seconds} s`, true);
          case 'stopped':
            return failed('ABORTED', `plugin ${pluginId}: initialization was interrupted`, true);
          case 'oversize':
            return failed(
              'PROTOCOL_ERROR',
              `plugin ${pluginId}: POST /initialize answered more than ${runtime.max_response_bytes} bytes`,
              false,
            );
          case 'redirect':
            return failed(
              'HTTP_ERROR',
              `plugin ${pluginId}: POST /initialize redirected to ${init.target}, another origin; Trellis does not follow it`,
              false,
            );
        }
      }
      const tools = await exchange('GET', '/tools', undefined, AbortSignal.any([signal, lifetime.signal]));
      if (tools.kind === 'response' && tools.status >= 200 && tools.status < 300) {
        try {
          const found = discoveredToolSpecs(manifest, (JSON.parse(tools.body) as { tools?: unknown }).tools);
          for (const problem of found.problems) logger.warn('plugin reported a malformed tool', { plugin: pluginId, problem });
          discovered = found.tools;
        } catch {
          logger.warn('GET /tools did not answer JSON', { plugin: pluginId });
        }
      }
      initialized = true;
      activeSince = performance.now();
      life.moveTo('active');
      startHealthTimer();
      return undefined;
    })().finally(() => {
      initializing = undefined;
    });
    return initializing;
  }

  function isIdempotent(tool: string): boolean {
    const spec = declared.get(tool) ?? discovered?.find((t) => t.name === tool);
    return spec?.contract.idempotent ?? !manifest.side_effects;
  }

  function interpret(call: ImplementationCall, body: string): ToolOutcome {
    const name = `${pluginId}.${call.tool}`;
    let parsed: unknown;
    try {
      parsed = body.trim() === '' ? null : JSON.parse(body);
    } catch {
      return failOutcome('PROTOCOL_ERROR', `${name}: the plugin answered with a body that is not JSON`);
    }
    if (
      typeof parsed === 'object' &&
      parsed !== null &&
      !Array.isArray(parsed) &&
      typeof (parsed as { success?: unknown }).success === 'boolean'
    ) {
      const envelope = parsed as { success: boolean; data?: unknown; error?: unknown; message?: unknown };
      if (envelope.success) return okOutcome(envelope.data === undefined ? null : envelope.data);
      const error = failureValueOfReply(envelope);
      const reported = (code: string, shown: unknown): ToolOutcome =>
        pluginFailure({ code, error: shown, name, valueLead: `${name}: the plugin's error value` });
      if (
        typeof error === 'object' &&
        error !== null &&
        typeof (error as { code?: unknown }).code === 'string' &&
        /^[A-Z][A-Z0-9_]*$/.test((error as { code: string }).code)
      ) {
        const coded = error as { code: string; message?: unknown };
        return reported(coded.code, typeof coded.message === 'string' ? coded.message : error);
      }
      return reported('TOOL_FAILED', error);
    }
    return okOutcome(parsed);
  }

  async function call(call: ImplementationCall): Promise<ToolOutcome> {
    const name = `${pluginId}.${call.tool}`;
    if (lifetime.signal.aborted) return notDispatched(failOutcome('PLUGIN_UNAVAILABLE', `plugin ${pluginId} has been shut down`));
    // The health monitor owns recovery: while it waits to re-initialize, calls fail at once.
    if (life.state === 'disabled') return notDispatched(failOutcome('PLUGIN_UNAVAILABLE', disabledMessage()));
    if (life.state === 'error' && recoveryTimer !== undefined) {
      const seconds = Math.max(0, Math.ceil((recoverAt - performance.now()) / 1000));
      return notDispatched(
        failOutcome(
          'PLUGIN_UNAVAILABLE',
          `${name} is unavailable: ${life.lastError ?? 'the plugin failed'}; Trellis initializes it again in ${seconds} s (see trellis status)`,
          true,
        ),
      );
    }
    const stop = callStopSignal(call);
    const stopped = () =>
      stoppedOutcome(pluginId, { signal: stop.signal, deadlineAt: call.deadlineAt, tool: call.tool }, 'waiting for the HTTP plugin');
    try {
      let last: ToolOutcome | undefined;
      for (let attempt = 0; attempt <= runtime.retry_count; attempt += 1) {
        if (attempt > 0) {
          await sleep(runtime.retry_delay_seconds * 1000, stop.signal);
          if (stop.signal.aborted) return stopped();
          logger.debug('retrying http plugin call', { plugin: pluginId, tool: call.tool, attempt });
        }
        const init = await ensureInitialized(stop.signal);
        if (stop.signal.aborted) return stopped();
        if (init) {
          last = notDispatched(init);
          if (init.ok === false && init.error.retryable) continue;
          return last;
        }
        const reply = await exchange('POST', `/tools/${encodeURIComponent(call.tool)}`, call.input ?? {}, stop.signal);
        switch (reply.kind) {
          case 'stopped':
            return stopped();
          case 'timeout':
            markBroken(`${name}: no answer within ${runtime.timeout_seconds} s`);
            return failOutcome(
              'TIMEOUT',
              `${name} did not answer within ${runtime.timeout_seconds} s (timeout_seconds); the plugin will be initialized again before the next call`,
              true,
            );
          case 'network':
            markBroken(`${name}: ${reply.message}`);
            last = failOutcome('HTTP_ERROR', `${name}: ${reply.message}`, true);
            if (reply.refused) {
              last = notDispatched(last);
              continue;
            }
            if (isIdempotent(call.tool)) continue;
            return last;
          case 'oversize':
            return failOutcome(
              'OUTPUT_TOO_LARGE',
              `${name}: the response is larger than ${runtime.max_response_bytes} bytes (max_response_bytes)`,
            );
          case 'redirect':
            return failOutcome(
              'HTTP_ERROR',
              `${name}: the plugin redirected to ${reply.target}, outside ${base.origin}; Trellis does not follow redirects to another origin`,
            );
          case 'response':
            if (reply.status >= 500) {
              markBroken(`${name}: HTTP ${reply.status}`);
              last = failOutcome('HTTP_ERROR', `${name}: the plugin answered HTTP ${reply.status}: ${bodyError(reply.body)}`, true);
              if (isIdempotent(call.tool)) continue;
              return last;
            }
            if (reply.status >= 400) {
              return failOutcome('HTTP_ERROR', `${name}: the plugin answered HTTP ${reply.status}: ${bodyError(reply.body)}`);
            }
            if (reply.status >= 300)
              return failOutcome('HTTP_ERROR', `${name}: the plugin answered HTTP ${reply.status} without a Location`);
            return interpret(call, reply.body);
        }
      }
      return last ?? failOutcome('HTTP_ERROR', `${name}: no attempt was made`);
    } catch (error) {
      return failOutcome('INTERNAL_ERROR', `http adapter for ${pluginId}: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      stop.dispose();
    }
  }

  function startHealthTimer(): void {
    const interval = (options.healthCheckIntervalSeconds ?? 0) * 1000;
    if (interval <= 0 || healthTimer || lifetime.signal.aborted) return;
    healthTimer = setInterval(() => {
      healthCheck().catch((error: unknown) =>
        logger.error('http adapter health check failed unexpectedly', {
          plugin: pluginId,
          error: error instanceof Error ? error.message : String(error),
        }),
      );
    }, interval);
    healthTimer.unref();
  }

  function disabledMessage(): string {
    return `plugin ${pluginId} is disabled: ${life.lastError ?? 'it failed'}`;
  }

  /** After a failed health check: initialize again after a backoff, or give up past `maxRestarts`. */
  function scheduleRecovery(): void {
    if (lifetime.signal.aborted || recoveryTimer !== undefined || life.state === 'disabled') return;
    if (activeSince > 0 && performance.now() - activeSince > STABLE_UPTIME_MS) life.restarts = 0;
    activeSince = 0;
    if (life.restarts >= maxRestarts) {
      life.lastError = `${life.lastError ?? 'failed'}; gave up after ${life.restarts} re-initialization(s) (max_restarts = ${maxRestarts}); fix the service at ${base.origin} or raise [plugins.entries.${pluginId}] max_restarts, then restart the host`;
      life.moveTo('disabled');
      logger.error('plugin disabled', { plugin: pluginId, error: life.lastError });
      if (healthTimer) clearInterval(healthTimer);
      healthTimer = undefined;
      return;
    }
    life.restarts += 1;
    const delay = Math.min((options.restartDelaySeconds ?? 1) * 1000 * 2 ** (life.restarts - 1), MAX_RECOVERY_DELAY_MS);
    recoverAt = performance.now() + delay;
    recoveryTimer = setTimeout(() => {
      recoveryTimer = undefined;
      void ensureInitialized(lifetime.signal).then((failed) => {
        if (failed !== undefined && !lifetime.signal.aborted) scheduleRecovery();
      });
    }, delay);
    recoveryTimer.unref();
  }

  async function healthCheck(): Promise<void> {
    if (lifetime.signal.aborted) return;
    // A call's failure (timeout, 5xx) left it in error with no recovery planned: the monitor takes it over.
    const orphaned = life.state === 'error' && recoveryTimer === undefined && initializing === undefined;
    if (!orphaned && (!initialized || life.state !== 'active')) return;
    const reply = await exchange('GET', '/health', undefined, lifetime.signal);
    if (reply.kind === 'stopped') return;
    let healthy = false;
    if (reply.kind === 'response' && reply.status >= 200 && reply.status < 300) {
      try {
        healthy = (JSON.parse(reply.body) as { healthy?: unknown }).healthy !== false;
      } catch {
        healthy = true;
      }
    }
    if (!healthy) {
      const why =
        reply.kind !== 'response'
          ? reply.kind
          : reply.status >= 200 && reply.status < 300
            ? 'it answered healthy: false'
            : `HTTP ${reply.status}`;
      const message = `plugin ${pluginId} failed its health check (${reply.kind === 'network' ? reply.message : why})`;
      life.recordHealthCheck(false, message);
      markBroken(message);
      logger.warn('http plugin health check failed', { plugin: pluginId, error: message });
      if (monitored) scheduleRecovery();
    } else {
      life.recordHealthCheck(true);
      // It answers again: initialize it now (recovering → active) rather than on the next call.
      if (orphaned && life.state === 'error' && initializing === undefined) await ensureInitialized(lifetime.signal);
    }
  }

  return {
    pluginId,
    async start(signal?: AbortSignal) {
      await ensureInitialized(signal ?? lifetime.signal);
    },
    discoveredTools: () => discovered,
    call,
    state: () => life.state,
    lastError: () => life.lastError,
    health: () => life.report(),
    onLifecycleChange: (listener) => life.onTransition(listener),
    async checkHealth(signal: AbortSignal) {
      // For `trellis doctor`: one GET /health now; reports only, never marks the plugin broken.
      if (!initialized) return { healthy: false, message: life.lastError ?? `not initialized (${life.state})` };
      const reply = await exchange('GET', '/health', undefined, signal);
      if (reply.kind !== 'response')
        return { healthy: false, message: reply.kind === 'network' ? reply.message : `no answer (${reply.kind})` };
      if (reply.status < 200 || reply.status >= 300) return { healthy: false, message: `GET /health answered HTTP ${reply.status}` };
      try {
        if ((JSON.parse(reply.body) as { healthy?: unknown }).healthy === false)
          return { healthy: false, message: 'it answered healthy: false' };
      } catch {
        // a 2xx without JSON counts as healthy, as for the periodic check
      }
      return { healthy: true };
    },
    async dispose() {
      lifetime.abort();
      if (healthTimer) clearInterval(healthTimer);
      if (recoveryTimer) clearTimeout(recoveryTimer);
      recoveryTimer = undefined;
      life.moveTo('unloaded');
      initialized = false;
    },
  };
}
