import { Listeners } from './listeners.ts';

/** One hold on a value kept in a {@link KeepAliveStore}. */
export interface KeepAliveLease<T> {
  readonly value: T;
  /** True when this `acquire` made the value; false when it joined a value another holder keeps alive. */
  readonly made: boolean;
  /**
   * Gives this hold up (idempotent). The value is disposed when its last hold is given up; the
   * promise resolves once that disposal has finished (at once while others still hold it).
   */
  release(): Promise<void>;
}

/**
 * Values a plugin keeps alive across the generations of a live host (`trellis serve`, `trellis
 * run`, `startLiveHost()`): a connection made by one generation's implementation is handed to the
 * next generation's, under the same key, instead of being closed and made again. Each key holds one
 * value with a reference count; the value is disposed when the last holder releases it. Keys are
 * the plugin's own (two plugins never see each other's); a key should name everything the value is
 * made from, so that a changed setting gives a new value. Under a plain `assemble()` the store lives
 * as long as the assembly.
 */
export interface KeepAliveStore {
  /**
   * A hold on the value under `key`: the live one when there is one, else `make()` (kept under the
   * key and disposed with `dispose` when its last hold is released). A value whose disposal has
   * begun is never handed out again: the next `acquire` makes a new one.
   */
  acquire<T>(key: string, make: () => T, dispose: (value: T) => void | Promise<void>): KeepAliveLease<T>;
  /**
   * Calls `listener` each time the host reloads (SIGHUP, a config or plugin change, `reload()`),
   * once the next generation is planned, e.g. to give parts that were given up a fresh start.
   * Returns the unsubscribe function. Never called under a plain `assemble()`.
   */
  onReload(listener: () => void): () => void;
}

/** The host's side of the keep-alive stores: one per host, a scoped {@link KeepAliveStore} per plugin. */
export interface KeepAliveHost {
  /** The store plugin `pluginId` sees: its keys only. */
  forPlugin(pluginId: string): KeepAliveStore;
  /** Tells every store's `onReload` listeners that the host reloads. */
  reloaded(): void;
  /** Values kept now (for status and tests). */
  size(): number;
}

interface Kept {
  readonly value: unknown;
  readonly dispose: (value: unknown) => void | Promise<void>;
  holders: number;
}

/**
 * Creates the keep-alive stores of one host. A live host keeps one for its whole life and hands
 * every generation the same; `assemble()` makes one per assembly. `onError` hears a disposal or
 * reload listener that threw (they never reach the caller).
 */
export function createKeepAliveHost(onError: (error: unknown) => void = () => undefined): KeepAliveHost {
  const kept = new Map<string, Kept>();
  const reloadListeners = new Listeners<void>(onError);
  const scoped = (pluginId: string, key: string): string => `${pluginId}\u0000${key}`;
  return {
    forPlugin(pluginId) {
      return {
        acquire<T>(key: string, make: () => T, dispose: (value: T) => void | Promise<void>): KeepAliveLease<T> {
          const full = scoped(pluginId, key);
          let entry = kept.get(full);
          const made = entry === undefined;
          if (entry === undefined) {
            entry = { value: make(), dispose: dispose as (value: unknown) => void | Promise<void>, holders: 0 };
            kept.set(full, entry);
          }
          entry.holders += 1;
          const held = entry;
          let released: Promise<void> | undefined;
          return {
            value: held.value as T,
            made,
            release() {
              released ??= (async () => {
                held.holders -= 1;
                if (held.holders > 0) return;
                if (kept.get(full) === held) kept.delete(full);
                try {
                  await held.dispose(held.value);
                } catch (error) {
                  onError(error);
                }
              })();
              return released;
            },
          };
        },
        onReload: (listener) => reloadListeners.add(listener),
      };
    },
    reloaded: () => reloadListeners.emit(),
    size: () => kept.size,
  };
}
