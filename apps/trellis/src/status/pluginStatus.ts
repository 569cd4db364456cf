import type { SnapshotEntry } from '@trellis/registry';
import type { ImplementationHealth, PluginImplementation } from '@trellis/runtime';

/** One plugin as `Assembly.status()` and `trellis status` report it: plain JSON. */
export interface PluginStatus {
  readonly id: string;
  readonly kind: string;
  /** The registry's decision: `enabled`, `disabled`, `unavailable`, `rejected`, `shadowed`. */
  readonly state: string;
  /** Where its code runs: `bundled`, or the external `[runtime] type` (`process`, `script`, `http`). */
  readonly runs: string;
  /** The registry's headline reason (why it is not enabled, or a note). */
  readonly reason?: { readonly code: string; readonly message: string };
  /** Enabled plugins only: lifecycle, last error, restarts, last health check, and each part's (MCP servers). */
  readonly lifecycle?: ImplementationHealth;
  /** Problems of a running plugin's parts (a bridged server down, a changed tool withheld). */
  readonly problems?: ReadonlyArray<{ readonly code: string; readonly message: string }>;
}

/** Every plugin of an assembly and its lifecycle, as `Assembly.status()` returns it. */
export interface AssemblyStatus {
  readonly profile: string;
  readonly plugins: readonly PluginStatus[];
}

/** The lifecycle record of an implementation, from `health()` where it has one, else from `state()`. */
export function healthOf(implementation: PluginImplementation): ImplementationHealth {
  if (implementation.health !== undefined) return implementation.health();
  const lastError = implementation.lastError?.();
  return { state: implementation.state(), ...(lastError !== undefined ? { lastError } : {}), restarts: 0 };
}

/** One registry entry with its implementation's lifecycle (undefined implementation: not started yet). */
export function describePluginStatus(entry: SnapshotEntry, implementation: PluginImplementation | undefined): PluginStatus {
  const reason = entry.reasons[0];
  const base = {
    id: entry.id,
    kind: entry.kind,
    state: entry.state,
    runs: entry.bundled ? 'bundled' : (entry.manifest?.runtime?.type ?? 'none'),
    ...(reason !== undefined ? { reason: { code: reason.code, message: reason.message } } : {}),
  };
  if (entry.state !== 'enabled') return base;
  if (implementation === undefined) return { ...base, lifecycle: { state: 'unloaded', restarts: 0 } };
  let problems: ReadonlyArray<{ code: string; message: string }> = [];
  try {
    problems = implementation.problems?.() ?? [];
  } catch {
    problems = [];
  }
  return { ...base, lifecycle: healthOf(implementation), ...(problems.length > 0 ? { problems } : {}) };
}
