import { createAgent, createConnectorHost, type Agent, type ManagedConnectorHost } from '@trellis/agent';
import type { SnapshotEntry } from '@trellis/registry';
import { ERROR_CODES, ProviderError, type Connector, type ConnectorHost, type Logger, type Provider } from '@trellis/sdk';
import {
  createAssemblyConnector,
  createAssemblyConnectors,
  createAssemblyProvider,
  pluginSettingsKey,
  pluginSourceOf,
  type PluginSource,
} from '../agentHost.ts';
import type { Assembly } from '../assemble.ts';

/** Options of {@link superviseRun}. */
export interface SuperviseRunOptions {
  /** The host's assembly; a live host's view follows its generations. */
  readonly assembly: Assembly;
  readonly system: string;
  /** Seconds a stopping connector's running turns get before they are cancelled. */
  readonly graceSeconds: number;
  /** `trellis run`'s own log (component `trellis`). */
  readonly logger: Logger;
  readonly agentLogger: Logger;
  readonly loggerFor: (connectorId: string) => Logger;
}

/** The provider and connectors `trellis run` serves with, kept in line with the config. */
export interface RunSupervisor {
  readonly agent: Agent;
  readonly host: ManagedConnectorHost;
  /**
   * Starts every connector; on the first that cannot start, stops the others and resolves with its
   * id and error. A `stop()` meanwhile ends the start in progress; it then resolves with undefined.
   */
  start(): Promise<{ readonly failed: string; readonly error: string } | undefined>;
  /** Ids of the connectors running now. */
  running(): string[];
  /**
   * Brings the provider and the connectors in line with the assembly's current generation (call it
   * after each applied reload). Runs one at a time, in order; resolves when this one is done.
   */
  follow(generation: number): Promise<void>;
  /**
   * Stops following and stops every connector, ending the starts in progress (their stop waits for
   * their turns; the caller owns the grace period, and calls `abandon` when it is over).
   */
  stop(): Promise<void>;
  /** Makes every connector still stopping stop now (a second `stop()`: a telegram bot aborts the requests it has in flight). */
  abandon(): void;
  /** Ids of the connectors whose stop has not ended. */
  stopping(): string[];
}

/** A connector started by the supervisor. */
interface RunningConnector {
  readonly id: string;
  /** {@link pluginSettingsKey} of the settings it runs with. */
  readonly key: string;
  readonly connector: Connector;
  readonly scope: ConnectorScope;
  /** A fresh connector from the same settings: what a failed restart falls back to. */
  readonly recreate: () => Promise<Connector>;
}

/** The provider turns start with now: a plugin's, or none (every turn then fails with the reason). */
type CurrentProvider =
  { readonly id: string; readonly key: string; readonly provider: Provider } | { readonly id: undefined; readonly provider: Provider };

/**
 * Creates `trellis run`'s agent (over the assembly's provider) and connectors. Throws
 * `AgentSetupError` when no provider or connector can be used, like the first start always did.
 */
export async function superviseRun(options: SuperviseRunOptions): Promise<RunSupervisor> {
  const { assembly, logger, loggerFor } = options;
  const source = pluginSourceOf(assembly);
  const chosen = await createAssemblyProvider(source, { logger: options.agentLogger });
  let current: CurrentProvider = { id: chosen.entry.id, key: pluginSettingsKey(source, chosen.entry), provider: chosen.provider };
  const agent = createAgent({
    system: options.system,
    provider: () => current.provider,
    catalog: () => assembly.catalog,
    runtime: assembly.runtime,
    logger: options.agentLogger,
  });
  const host = createConnectorHost({ agent, logger: options.agentLogger });
  const created = await createAssemblyConnectors(source, { loggerFor });
  const connectors = new Map<string, RunningConnector>();
  /** Connectors whose start, or whose stop, is under way (with their ids). */
  const starting = new Map<Connector, string>();
  const stopping = new Map<Connector, string>();
  let chain: Promise<void> = Promise.resolve();
  let firstStart: Promise<unknown> = Promise.resolve();
  let closing = false;

  const recreateFrom = (from: PluginSource, entry: SnapshotEntry) => () => createAssemblyConnector(from, entry, loggerFor(entry.id));

  async function start(): Promise<{ failed: string; error: string } | undefined> {
    for (const { id, entry, connector } of created) {
      if (closing) return undefined;
      const scope = scopeHost(host);
      try {
        await startTracked(id, connector, scope);
      } catch (error) {
        // Stopped while starting: not a failure, stop() takes it from here.
        if (closing) return undefined;
        await Promise.all([...connectors.values()].map((running) => stopTracked(running.id, running.connector)));
        connectors.clear();
        return { failed: id, error: messageOf(error) };
      }
      // Started although stop() came meanwhile: stop() has stopped it already.
      if (closing) return undefined;
      connectors.set(id, { id, key: pluginSettingsKey(source, entry), connector, scope, recreate: recreateFrom(source, entry) });
    }
    return undefined;
  }

  async function startTracked(id: string, connector: Connector, scope: ConnectorScope): Promise<void> {
    starting.set(connector, id);
    try {
      await connector.start(scope.host);
    } finally {
      starting.delete(connector);
    }
  }

  /** Stops a connector, logging a failure; never rejects. `abandon()` reaches it while it runs. */
  async function stopTracked(id: string, connector: Connector): Promise<void> {
    stopping.set(connector, id);
    try {
      await connector.stop();
    } catch (error) {
      logger.error('connector failed to stop cleanly', { connector: id, error: messageOf(error) });
    } finally {
      stopping.delete(connector);
    }
  }

  // ── following reloads ──────────────────────────────────────────────────────────────────────
  async function reconcile(generation: number): Promise<void> {
    const next = pluginSourceOf(assembly);
    await followProvider(next, generation);
    await followConnectors(next, generation);
  }

  async function followProvider(next: PluginSource, generation: number): Promise<void> {
    const providers = next.snapshot.plugins.filter((p) => p.kind === 'provider');
    const wanted = providers.find((p) => p.state === 'enabled');
    if (wanted !== undefined) {
      const key = pluginSettingsKey(next, wanted);
      if (current.id === wanted.id && current.key === key) return;
      let made;
      try {
        made = await createAssemblyProvider(next, { provider: wanted.id, logger: options.agentLogger });
      } catch (error) {
        logger.error('provider not changed: the new one cannot be created; turns keep using the previous one', {
          provider: wanted.id,
          code: codeOf(error, ERROR_CODES.PROVIDER_UNAVAILABLE),
          error: messageOf(error),
          generation,
        });
        return;
      }
      const previous = current;
      current = { id: wanted.id, key, provider: made.provider };
      logger.info('provider changed: turns that start now use it, running turns finish on the previous one', {
        provider: wanted.id,
        model: made.provider.model,
        previous: { provider: previous.id ?? null, model: previous.id === undefined ? null : previous.provider.model },
        generation,
      });
      return;
    }
    if (current.id === undefined) return;
    const was = providers.find((p) => p.id === current.id);
    const reason = was?.reasons[0];
    if (reason?.code === ERROR_CODES.CONFIG_INVALID) {
      logger.error('provider settings are invalid: turns keep using its previous settings until they are fixed', {
        provider: current.id,
        code: reason.code,
        keys: settingKeysIn(reason.message),
        error: reason.message,
        generation,
      });
      return;
    }
    const why =
      was === undefined ? `${current.id} is no longer installed` : `${current.id} is ${was.state}: ${reason?.message ?? 'no reason given'}`;
    const message = `no model provider is enabled since generation ${generation} (${why}); enable one in runtime.toml and save — run applies it without a restart`;
    logger.error('no provider: turns that start now fail until one is enabled; running turns finish', {
      provider: current.id,
      code: ERROR_CODES.PROVIDER_UNAVAILABLE,
      error: message,
      generation,
    });
    current = { id: undefined, provider: unavailableProvider(message) };
  }

  async function followConnectors(next: PluginSource, generation: number): Promise<void> {
    const wanted = new Map(next.snapshot.plugins.filter((p) => p.kind === 'connector').map((p) => [p.id, p]));
    for (const running of [...connectors.values()]) {
      if (closing) return;
      const entry = wanted.get(running.id);
      if (entry?.state === 'enabled') {
        const key = pluginSettingsKey(next, entry);
        if (key !== running.key) await restart(running, next, entry, key, generation);
        continue;
      }
      const reason = entry?.reasons[0];
      if (reason?.code === ERROR_CODES.CONFIG_INVALID) {
        logger.error('connector settings are invalid: it keeps running with its previous settings until they are fixed', {
          connector: running.id,
          code: reason.code,
          keys: settingKeysIn(reason.message),
          error: reason.message,
          generation,
        });
        continue;
      }
      connectors.delete(running.id);
      logger.info('connector stopping: it is no longer enabled', {
        connector: running.id,
        reason: entry === undefined ? `${running.id} is no longer installed` : `${entry.state}: ${reason?.message ?? 'no reason given'}`,
        running: running.scope.running(),
        generation,
      });
      await stopWithGrace(running);
      logger.info('connector stopped', { connector: running.id, generation });
    }
    for (const entry of wanted.values()) {
      if (closing) return;
      if (entry.state !== 'enabled' || connectors.has(entry.id)) continue;
      try {
        const connector = await createAssemblyConnector(next, entry, loggerFor(entry.id));
        const started = await startConnector(entry.id, connector);
        if (started === undefined) return;
        connectors.set(entry.id, { ...started, key: pluginSettingsKey(next, entry), recreate: recreateFrom(next, entry) });
        logger.info('connector started', { connector: entry.id, generation });
      } catch (error) {
        logger.error('connector failed to start; fix its settings and save to try again', {
          connector: entry.id,
          code: codeOf(error, ERROR_CODES.CONNECTOR_FAILED),
          error: messageOf(error),
          generation,
        });
      }
    }
    if (connectors.size === 0 && !closing) {
      logger.warn('no connector is running: run keeps serving nothing until a config change enables one (or stop it)', { generation });
    }
  }

  /** Stop the old connector, then start one with the new settings (Telegram allows one poller per bot); on failure, the old settings again. */
  async function restart(
    running: RunningConnector,
    next: PluginSource,
    entry: SnapshotEntry,
    key: string,
    generation: number,
  ): Promise<void> {
    let replacement: Connector;
    try {
      replacement = await createAssemblyConnector(next, entry, loggerFor(entry.id));
    } catch (error) {
      logger.error('connector not restarted: its new settings cannot be used; it keeps running with the previous ones', {
        connector: running.id,
        code: codeOf(error, ERROR_CODES.CONNECTOR_FAILED),
        error: messageOf(error),
        generation,
      });
      return;
    }
    logger.info('connector restarting with its new settings', { connector: running.id, running: running.scope.running(), generation });
    connectors.delete(running.id);
    await stopWithGrace(running);
    if (closing) return;
    try {
      const started = await startConnector(running.id, replacement);
      if (started === undefined) return;
      connectors.set(running.id, { ...started, key, recreate: recreateFrom(next, entry) });
      logger.info('connector restarted', { connector: running.id, generation });
      return;
    } catch (error) {
      logger.error('connector failed to start with its new settings; starting it again with the previous ones', {
        connector: running.id,
        code: codeOf(error, ERROR_CODES.CONNECTOR_FAILED),
        error: messageOf(error),
        generation,
      });
    }
    try {
      const started = await startConnector(running.id, await running.recreate());
      if (started === undefined) return;
      connectors.set(running.id, { ...running, ...started });
      logger.warn('connector runs with its previous settings; fix the new ones and save to apply them', {
        connector: running.id,
        generation,
      });
    } catch (error) {
      logger.error('connector is stopped: it could not start again with its previous settings either; fix its settings and save', {
        connector: running.id,
        code: codeOf(error, ERROR_CODES.CONNECTOR_FAILED),
        error: messageOf(error),
        generation,
      });
    }
  }

  /** Starts a connector on its own scope; undefined when run began stopping meanwhile (stop() then stops it). Throws when it cannot start. */
  async function startConnector(
    id: string,
    connector: Connector,
  ): Promise<Pick<RunningConnector, 'id' | 'connector' | 'scope'> | undefined> {
    if (closing) return undefined;
    const scope = scopeHost(host);
    try {
      await startTracked(id, connector, scope);
    } catch (error) {
      // Ended by stop(), which also stops it.
      if (closing) return undefined;
      await connector.stop().catch(() => undefined);
      throw error;
    }
    // stop() came while it started, and has stopped it already.
    if (closing) return undefined;
    return { id, connector, scope };
  }

  /**
   * Stops a connector; its turns still running when the grace period ends are cancelled (their
   * chats get the apology), and what it still sends after that is abandoned.
   */
  async function stopWithGrace(running: RunningConnector): Promise<void> {
    const stopped = await stopWithin(stopTracked(running.id, running.connector), {
      graceSeconds: options.graceSeconds,
      onGraceOver: () => {
        logger.warn("grace period over: cancelling the connector's running turns", {
          connector: running.id,
          running: running.scope.running(),
        });
        running.scope.cancel();
      },
      onAbandon: () => {
        logger.warn('connector still stopping after its turns were cancelled: abandoning what it still sends', { connector: running.id });
        void running.connector.stop().catch(() => undefined);
      },
    });
    if (!stopped) logger.error('connector did not stop; leaving it behind', { connector: running.id });
  }

  return {
    agent,
    host,
    start() {
      const started = start();
      firstStart = started.catch(() => undefined);
      return started;
    },
    running: () => [...connectors.keys()],
    follow(generation) {
      const step = chain.then(() => (closing ? undefined : reconcile(generation)));
      chain = step.catch((error: unknown) =>
        logger.error('following the reload failed (a bug in Trellis; please report it)', { error: messageOf(error), generation }),
      );
      return chain;
    },
    async stop() {
      closing = true;
      // A start still waiting (a Bot API that does not answer getMe) ends now.
      const aborted = [...starting].map(([connector, id]) => stopTracked(id, connector));
      // At once, before any await: a connector told to stop takes no message from now on.
      const stopped = [...connectors.values()].map((running) => stopTracked(running.id, running.connector));
      await firstStart;
      await chain;
      await Promise.all([...aborted, ...stopped]);
    },
    abandon() {
      for (const connector of stopping.keys()) void connector.stop().catch(() => undefined);
    },
    stopping: () => [...new Set(stopping.values())],
  };
}

/** What one connector gets: the shared host (sessions survive a restart), with its own turns to cancel. */
interface ConnectorScope {
  readonly host: ConnectorHost;
  running(): number;
  cancel(): void;
}

function scopeHost(shared: ConnectorHost): ConnectorScope {
  const controller = new AbortController();
  let running = 0;
  return {
    host: {
      async *handle(message, handleOptions = {}) {
        const signal = handleOptions.signal === undefined ? controller.signal : AbortSignal.any([handleOptions.signal, controller.signal]);
        running += 1;
        try {
          yield* shared.handle(message, { signal });
        } finally {
          running -= 1;
        }
      },
      reset: (conversationId) => shared.reset(conversationId),
    },
    running: () => running,
    cancel: () => controller.abort(),
  };
}

/** The provider while none is enabled: every turn ends with `PROVIDER_UNAVAILABLE` and the reason. */
function unavailableProvider(message: string): Provider {
  return {
    model: '(none)',
    // eslint-disable-next-line require-yield
    async *stream() {
      throw new ProviderError(ERROR_CODES.PROVIDER_UNAVAILABLE, message);
    },
  };
}

/** The config keys a registry message names (`plugins.entries.telegram.config.api_root`, `runtime.tools.x.y`). */
function settingKeysIn(message: string): string[] {
  const keys = message.match(/\b(?:plugins\.entries|runtime\.tools)\.[\w.[\]-]*\w\]?/g) ?? [];
  return [...new Set(keys)];
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function codeOf(error: unknown, fallback: string): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : fallback;
}

/**
 * After a grace period's turns are cancelled, how long their apologies get before what is still in
 * flight is abandoned; and then how long an abandoning stop is waited for before it is left behind.
 */
export const SETTLE_MS = 2000;

/** Options of {@link stopWithin}. */
export interface StopWithinOptions {
  readonly graceSeconds: number;
  /** The grace period is over (or `interrupt` came): cancel the running turns. */
  readonly onGraceOver: () => void;
  /** Cancelling did not end the stop within `settleMs` (or `interrupt` came): abort what is still in flight. */
  readonly onAbandon: () => void;
  /** Cuts the waiting short: cancels and abandons at once (a second signal). */
  readonly interrupt?: Promise<unknown>;
  /** Default {@link SETTLE_MS}. */
  readonly settleMs?: number;
}

/**
 * Waits for `stopping`, bounded: `graceSeconds` for it to end by itself, then `onGraceOver` and
 * `settleMs` more, then `onAbandon` and `settleMs` more. Resolves true when it ended, false when it
 * was left running (the caller says so and goes on).
 */
export async function stopWithin(stopping: Promise<unknown>, options: StopWithinOptions): Promise<boolean> {
  const settleMs = options.settleMs ?? SETTLE_MS;
  const timers: NodeJS.Timeout[] = [];
  const after = <T>(ms: number, value: T) => new Promise<T>((resolve) => timers.push(setTimeout(() => resolve(value), ms)));
  const ended = stopping.then(
    () => 'ended' as const,
    () => 'ended' as const,
  );
  const interrupted = options.interrupt?.then(() => 'interrupted' as const) ?? new Promise<never>(() => {});
  try {
    let outcome: 'ended' | 'grace over' | 'settled' | 'interrupted' = await Promise.race([
      ended,
      after(options.graceSeconds * 1000, 'grace over' as const),
      interrupted,
    ]);
    if (outcome === 'ended') return true;
    options.onGraceOver();
    if (outcome === 'grace over') outcome = await Promise.race([ended, after(settleMs, 'settled' as const), interrupted]);
    if (outcome === 'ended') return true;
    options.onAbandon();
    return (await Promise.race([ended, after(settleMs, 'left' as const)])) === 'ended';
  } finally {
    for (const timer of timers) clearTimeout(timer);
  }
}
