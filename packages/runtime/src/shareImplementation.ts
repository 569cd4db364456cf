import type { PluginImplementation } from './PluginImplementation.ts';

/**
 * One implementation held by several owners at once (the runtimes of successive reload
 * generations). Each owner gets its own view from `acquire()`; a view's `dispose()` releases only
 * that owner's hold, and the implementation itself is disposed when the last hold is released.
 */
export interface SharedImplementation {
  /** The implementation every view forwards to. */
  readonly implementation: PluginImplementation;
  /** A view for one more owner. Throws once the implementation was disposed (a bug in the caller). */
  acquire(): PluginImplementation;
  /** Owners holding a view now. */
  holders(): number;
  /** True once the last hold was released and the implementation disposed. */
  disposed(): boolean;
}

// Optional methods a view forwards when the implementation has them. A Record over every optional
// key, so adding an optional method to PluginImplementation fails typecheck here until it is listed.
type OptionalKey = {
  [K in keyof PluginImplementation]-?: undefined extends PluginImplementation[K] ? K : never;
}[keyof PluginImplementation];
const FORWARDED: Record<OptionalKey, true> = {
  discoveredTools: true,
  onToolsChanged: true,
  problems: true,
  canonicalize: true,
  canonicalizes: true,
  lastError: true,
  checkHealth: true,
  health: true,
  onLifecycleChange: true,
};
const OPTIONAL_METHODS = Object.keys(FORWARDED) as OptionalKey[];

/**
 * Wraps `implementation` so that several runtimes can use it without one runtime's `dispose()`
 * stopping it under the others: this is how a reload hands an unchanged plugin's running child (and
 * its state) to the next generation instead of restarting it.
 */
export function shareImplementation(implementation: PluginImplementation): SharedImplementation {
  let holders = 0;
  let disposal: Promise<void> | undefined;

  const release = (): Promise<void> => {
    holders -= 1;
    if (holders > 0) return Promise.resolve();
    disposal ??= Promise.resolve().then(() => implementation.dispose());
    return disposal;
  };

  const acquire = (): PluginImplementation => {
    if (disposal !== undefined)
      throw new Error(`the implementation of ${implementation.pluginId} was already disposed; it cannot be shared again`);
    holders += 1;
    let released = false;
    const view: Record<string, unknown> = {
      pluginId: implementation.pluginId,
      start: implementation.start.bind(implementation),
      call: implementation.call.bind(implementation),
      state: implementation.state.bind(implementation),
      dispose: (): Promise<void> => {
        if (released) return disposal ?? Promise.resolve();
        released = true;
        return release();
      },
    };
    for (const name of OPTIONAL_METHODS) {
      const method = implementation[name];
      if (typeof method === 'function') view[name] = (method as (...args: unknown[]) => unknown).bind(implementation);
    }
    return view as unknown as PluginImplementation;
  };

  return {
    implementation,
    acquire,
    holders: () => holders,
    disposed: () => disposal !== undefined,
  };
}
