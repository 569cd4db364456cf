import { shareImplementation, type PluginImplementation, type SharedImplementation } from '@trellis/runtime';
import { silentLogger, type Logger } from '@trellis/sdk';
import { createKeepAliveHost, type KeepAliveHost } from '@trellis/sdk/internal';

/**
 * The plugin implementations a live host keeps across reload generations. A generation leases a
 * plugin's implementation by its fingerprint (manifest digest, resolved config, granted
 * environment): the same fingerprint gets a view of the running implementation (same child, same
 * state), another one gets a fresh implementation. An implementation is disposed when the last
 * generation holding it is disposed.
 */
export interface ImplementationPool {
  /** Whether a live implementation with this fingerprint exists (the next generation should lease it now). */
  has(pluginId: string, fingerprint: string): boolean;
  /** A view of the implementation with this fingerprint; `make` builds one when none is live. */
  lease(pluginId: string, fingerprint: string, make: () => PluginImplementation | undefined): PluginImplementation | undefined;
  /**
   * Makes and starts an implementation under a fingerprint the next generation is expected to
   * have, before that generation is built (a reload starting a changed plugin's new child early).
   * Nobody holds it: the generation takes it over by leasing the same fingerprint, and
   * {@link ImplementationPool.dropUnclaimed} stops it when the fingerprint turned out otherwise.
   * Does nothing when an implementation with this fingerprint is live already.
   */
  prestart(pluginId: string, fingerprint: string, make: () => PluginImplementation | undefined): void;
  /** Stops every prestarted implementation that no generation has leased. Call it once each build has ended. */
  dropUnclaimed(): Promise<void>;
  /** Implementations not yet disposed (for status and tests). */
  size(): number;
  /**
   * Starts recording the implementations made from now on (a generation being built). `abandon()`
   * stops those only the building generation holds, also in the middle of their start (a handshake
   * that never answers): the host closes and the half-built generation will never serve.
   */
  track(): { end(): void; abandon(): Promise<void> };
  /**
   * What plugins keep alive below the implementation (`PluginContext.keepAlive`): a changed plugin
   * gets a fresh implementation, but its parts that did not change (one bridged MCP server of
   * several) carry over through this store, from generation to generation.
   */
  readonly keepAlive: KeepAliveHost;
}

/** Creates an empty {@link ImplementationPool}. */
export function createImplementationPool(options: { readonly logger?: Logger } = {}): ImplementationPool {
  const logger = options.logger ?? silentLogger;
  const keepAlive = createKeepAliveHost((error) =>
    logger.error(
      `closing a value kept across reloads, or a reload listener, failed: ${error instanceof Error ? error.message : String(error)}`,
    ),
  );
  // Keyed by plugin id and fingerprint: while an old generation drains, a changed plugin has two
  // live implementations (the old one serving the old generation's calls, the new one the new's).
  const entries = new Map<string, SharedImplementation>();
  const keyOf = (pluginId: string, fingerprint: string): string => `${pluginId}\u0000${fingerprint}`;
  const live = (key: string): SharedImplementation | undefined => {
    const shared = entries.get(key);
    if (shared?.disposed() === true) {
      entries.delete(key);
      return undefined;
    }
    return shared;
  };
  let made: Set<SharedImplementation> | undefined;
  const unclaimed = new Map<string, SharedImplementation>();
  const share = (key: string, implementation: PluginImplementation): SharedImplementation => {
    const shared = shareImplementation(implementation);
    made?.add(shared);
    entries.set(key, shared);
    return shared;
  };
  return {
    keepAlive,
    track() {
      const recorded = new Set<SharedImplementation>();
      made = recorded;
      const end = (): void => {
        if (made === recorded) made = undefined;
      };
      return {
        end,
        async abandon() {
          end();
          // Held by one generation only: the one being built (an older generation's hold means it serves calls).
          const own = [...recorded].filter((shared) => !shared.disposed() && shared.holders() <= 1);
          await Promise.allSettled(own.map((shared) => shared.implementation.dispose()));
        },
      };
    },
    has: (pluginId, fingerprint) => live(keyOf(pluginId, fingerprint)) !== undefined,
    lease(pluginId, fingerprint, make) {
      const key = keyOf(pluginId, fingerprint);
      const existing = live(key);
      if (existing !== undefined) return existing.acquire();
      const implementation = make();
      if (implementation === undefined) return undefined;
      return share(key, implementation).acquire();
    },
    prestart(pluginId, fingerprint, make) {
      const key = keyOf(pluginId, fingerprint);
      if (live(key) !== undefined) return;
      const implementation = make();
      if (implementation === undefined) return;
      unclaimed.set(key, share(key, implementation));
      // A failed start is the implementation's state (the generation that leases it reports it), never a crash.
      implementation.start().catch(() => undefined);
    },
    async dropUnclaimed() {
      const drop = [...unclaimed].filter(([, shared]) => shared.holders() === 0 && !shared.disposed());
      unclaimed.clear();
      for (const [key] of drop) entries.delete(key);
      await Promise.allSettled(drop.map(([, shared]) => shared.implementation.dispose()));
    },
    size() {
      for (const key of [...entries.keys()]) live(key);
      return entries.size;
    },
  };
}
