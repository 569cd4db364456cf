import { Listeners } from './listeners.ts';
import type { Logger } from './logger.ts';

/**
 * Lifecycle of a plugin's implementation (or of one part of it, such as one bridged MCP server),
 * shown by `trellis plugins list` and `trellis status`.
 *
 * - `unloaded`: never started (or shut down);
 * - `initializing`: the first start (spawn and handshake, `POST /initialize`, connect);
 * - `active`: serving calls;
 * - `error`: it failed (crash, failed health check, lost connection); a recovery follows unless
 *   the restart budget is spent;
 * - `recovering`: starting again after an error (with backoff);
 * - `disabled`: it will not be started again in this host (restarts past `max_restarts`, or it
 *   cannot run at all); the reason says what to fix.
 */
export type LifecycleState = 'unloaded' | 'initializing' | 'active' | 'error' | 'recovering' | 'disabled';

/** The transitions the lifecycle allows: the one definition of the state machine. */
export const LIFECYCLE_TRANSITIONS: Readonly<Record<LifecycleState, readonly LifecycleState[]>> = {
  unloaded: ['initializing', 'active', 'error', 'disabled'],
  initializing: ['active', 'error', 'disabled', 'unloaded'],
  active: ['error', 'recovering', 'disabled', 'unloaded'],
  error: ['recovering', 'disabled', 'unloaded'],
  recovering: ['active', 'error', 'disabled', 'unloaded'],
  disabled: ['unloaded'],
};

/** The result of one health check (`health_check`, `GET /health`, MCP `ping`). */
export interface HealthCheckRecord {
  readonly healthy: boolean;
  /** ISO 8601 time the check ended. */
  readonly at: string;
  /** Why it failed; absent when healthy. */
  readonly message?: string;
}

/** Where one plugin (or one part of it) stands: plain JSON. */
export interface LifecycleReport {
  readonly state: LifecycleState;
  /** ISO 8601 time of the last transition; absent while never started. */
  readonly since?: string;
  /** The last error (kept after recovering, so the cause of the last restart stays visible). */
  readonly lastError?: string;
  /** Restarts (re-initializations, reconnects) counted against `maxRestarts`. */
  readonly restarts: number;
  /** The restart budget, when there is one (`max_restarts`). */
  readonly maxRestarts?: number;
  readonly lastHealthCheck?: HealthCheckRecord;
}

/** One part of a plugin (a bridged MCP server) and its lifecycle. */
export interface PartLifecycleReport extends LifecycleReport {
  readonly name: string;
}

/** One state change, as lifecycle listeners receive it. */
export interface LifecycleTransition {
  readonly plugin: string;
  /** The part that changed (an MCP server's name); absent for the plugin itself. */
  readonly part?: string;
  readonly from: LifecycleState;
  readonly to: LifecycleState;
  /** ISO 8601. */
  readonly at: string;
  /** The error at the time of the change (the reason for `error` and `disabled`). */
  readonly error?: string;
  readonly restarts: number;
}

/** Options of {@link LifecycleMachine}. */
export interface LifecycleMachineOptions {
  readonly plugin: string;
  readonly part?: string;
  readonly maxRestarts?: number;
  readonly logger?: Logger;
}

/**
 * A part that stays up this long has its restart count reset (5 minutes): process plugins, HTTP
 * plugins and bridged MCP servers follow the same rule.
 */
export const STABLE_UPTIME_MS = 5 * 60 * 1000;

/**
 * Keeps one lifecycle: its state, the time of the last transition, the last error, the restart
 * count and the last health check, and tells listeners about every transition. Adapters decide
 * *when* to move; this class holds the one table of *which* moves exist. A move outside the table
 * is a bug in an adapter: it is applied (the adapter's view wins) and logged.
 */
export class LifecycleMachine {
  #state: LifecycleState = 'unloaded';
  #since: string | undefined;
  #lastHealthCheck: HealthCheckRecord | undefined;
  readonly #listeners = new Listeners<LifecycleTransition>((error) =>
    this.options.logger?.error('a lifecycle listener threw', {
      plugin: this.options.plugin,
      error: error instanceof Error ? error.message : String(error),
    }),
  );
  /** The last error; set it before moving to `error` or `disabled` so the transition carries it. */
  lastError: string | undefined;
  restarts = 0;
  maxRestarts: number | undefined;

  constructor(private readonly options: LifecycleMachineOptions) {
    this.maxRestarts = options.maxRestarts;
  }

  get state(): LifecycleState {
    return this.#state;
  }

  /** Moves to `to` (no-op when already there) and tells the listeners. */
  moveTo(to: LifecycleState): void {
    const from = this.#state;
    if (from === to) return;
    if (!LIFECYCLE_TRANSITIONS[from].includes(to)) {
      this.options.logger?.warn('lifecycle transition outside the state machine (a bug in Trellis)', {
        plugin: this.options.plugin,
        ...(this.options.part !== undefined ? { part: this.options.part } : {}),
        from,
        to,
      });
    }
    this.#state = to;
    const at = new Date().toISOString();
    this.#since = at;
    this.#listeners.emit({
      plugin: this.options.plugin,
      ...(this.options.part !== undefined ? { part: this.options.part } : {}),
      from,
      to,
      at,
      ...(this.lastError !== undefined && (to === 'error' || to === 'disabled') ? { error: this.lastError } : {}),
      restarts: this.restarts,
    });
  }

  /** Records one health check's result. */
  recordHealthCheck(healthy: boolean, message?: string): void {
    this.#lastHealthCheck = { healthy, at: new Date().toISOString(), ...(healthy || message === undefined ? {} : { message }) };
  }

  /** Calls `listener` on every transition; returns the unsubscribe function. */
  onTransition(listener: (transition: LifecycleTransition) => void): () => void {
    return this.#listeners.add(listener);
  }

  report(): LifecycleReport {
    return {
      state: this.#state,
      ...(this.#since !== undefined ? { since: this.#since } : {}),
      ...(this.lastError !== undefined ? { lastError: this.lastError } : {}),
      restarts: this.restarts,
      ...(this.maxRestarts !== undefined ? { maxRestarts: this.maxRestarts } : {}),
      ...(this.#lastHealthCheck !== undefined ? { lastHealthCheck: this.#lastHealthCheck } : {}),
    };
  }
}
