import { createAgent, type Agent, type AgentOptions } from '@trellis/agent';
import type { SnapshotEntry } from '@trellis/registry';
import { canonicalJson } from '@trellis/sdk/internal';
import {
  isProviderError,
  silentLogger,
  type Connector,
  type Logger,
  type PluginContext,
  type PluginCode,
  type Provider,
} from '@trellis/sdk';
import type { Assembly } from './assemble.ts';
import { BUNDLED_PLUGINS } from './bundled.gen.ts';
import { UsageError } from './errors.ts';

/** Options of {@link createAssemblyAgent}: the agent's own options, and which provider to use. */
export interface AssemblyAgentOptions extends Omit<AgentOptions, 'provider' | 'catalog' | 'runtime' | 'logger'> {
  /** The provider plugin's id; default: the first enabled provider in snapshot order. */
  readonly provider?: string;
  readonly logger?: Logger;
}

/**
 * The host cannot do what was asked with this config and environment: no provider or connector is
 * enabled and available, or one refused to start. A usage/config problem (exit 2); the message says what to set.
 */
export class AgentSetupError extends UsageError {
  constructor(
    message: string,
    /** A stable code (`PROVIDER_UNAVAILABLE`, `CONNECTOR_FAILED`). */
    readonly code: string,
  ) {
    super(message);
  }
}

const LOCAL_SERVER_HINT =
  'To use a local OpenAI-compatible server instead (llama.cpp, vLLM, Ollama…), set in runtime.toml\n' +
  '  [plugins.entries.openrouter.config]\n' +
  '  base_url = "http://127.0.0.1:8080/v1"\n' +
  '  model = "<the model the server serves>"\n' +
  'and set OPENROUTER_API_KEY to any value the server accepts.';

function unusable(entries: readonly SnapshotEntry[], kind: 'provider' | 'connector'): string {
  if (entries.length === 0) return `no ${kind} plugin is installed`;
  return entries.map((e) => `${e.id} is ${e.state}: ${e.reasons[0]?.message ?? 'no reason given'}`).join('; ');
}

/**
 * What a provider or connector is made from: one generation's snapshot, resolved settings and host
 * paths. A live host's assembly reads the current generation on every access, so take these at once.
 */
export type PluginSource = Pick<Assembly, 'snapshot' | 'registry' | 'workspace' | 'env'>;

/** The fields of `assembly` that make its providers and connectors, read now. */
export function pluginSourceOf(assembly: PluginSource): PluginSource {
  return { snapshot: assembly.snapshot, registry: assembly.registry, workspace: assembly.workspace, env: assembly.env };
}

/**
 * What a provider or connector plugin is built from, as one string: its manifest and resolved
 * settings (the environment is the process's and does not change). Equal keys in two generations
 * mean a running provider or connector need not be rebuilt.
 */
export function pluginSettingsKey(source: PluginSource, entry: SnapshotEntry): string {
  return canonicalJson([entry.bundled, entry.manifestSha256 ?? null, source.registry.settings.get(entry.id) ?? {}]);
}

async function loadBundled(
  source: PluginSource,
  entry: SnapshotEntry,
  logger: Logger,
): Promise<{ definition: PluginCode; context: PluginContext }> {
  const descriptor = BUNDLED_PLUGINS.find((d) => d.manifest.id === entry.id);
  if (descriptor === undefined || !entry.bundled) {
    const code = entry.kind === 'connector' ? 'CONNECTOR_FAILED' : 'PROVIDER_UNAVAILABLE';
    throw new AgentSetupError(
      `${entry.id}: only bundled ${entry.kind} plugins can run in this version, and "${entry.id}" is external; remove it or use a bundled one`,
      code,
    );
  }
  const definition = await descriptor.load();
  const context: PluginContext = {
    config: source.registry.settings.get(entry.id) ?? {},
    logger,
    workspace: { root: source.workspace },
    env: source.env,
  };
  return { definition, context };
}

/** A provider plugin's provider, created, and the plugin it came from. */
export interface AssemblyProvider {
  readonly entry: SnapshotEntry;
  readonly provider: Provider;
}

/**
 * Creates the provider an agent over `source` uses: the enabled provider plugin named `provider`,
 * or the first enabled one in snapshot order. Throws `AgentSetupError` (naming the variable or key
 * to set) when none is enabled and available or it refuses to start.
 */
export async function createAssemblyProvider(
  source: PluginSource,
  options: { readonly provider?: string; readonly logger?: Logger } = {},
): Promise<AssemblyProvider> {
  const logger = options.logger ?? silentLogger;
  const providers = source.snapshot.plugins.filter(
    (p) => p.kind === 'provider' && (options.provider === undefined || p.id === options.provider),
  );
  const entry = providers.find((p) => p.state === 'enabled');
  if (entry === undefined) {
    const wanted = options.provider !== undefined ? `the provider "${options.provider}"` : 'a model provider';
    const openrouterMissingKey = providers.some((p) => p.id === 'openrouter' && p.reasons.some((r) => r.code === 'MISSING_ENV'));
    throw new AgentSetupError(
      `chat needs ${wanted}, and none is available: ${unusable(providers, 'provider')}.` +
        (openrouterMissingKey ? `\nSet OPENROUTER_API_KEY to your OpenRouter key (https://openrouter.ai/keys).\n${LOCAL_SERVER_HINT}` : ''),
      'PROVIDER_UNAVAILABLE',
    );
  }
  const { definition, context } = await loadBundled(source, entry, logger);
  if (definition.provider === undefined)
    throw new AgentSetupError(`${entry.id} is a provider plugin but exports no provider; rebuild Trellis`, 'PROVIDER_UNAVAILABLE');
  try {
    return { entry, provider: await definition.provider.create(context) };
  } catch (error) {
    if (isProviderError(error)) throw new AgentSetupError(`${entry.id}: ${error.message}`, error.code);
    throw error;
  }
}

/**
 * An agent over an assembly: the enabled provider plugin's model driving the assembly's catalog
 * and runtime. Throws `AgentSetupError` (naming the variable or key to set) when no provider is
 * enabled and available.
 */
export async function createAssemblyAgent(assembly: Assembly, options: AssemblyAgentOptions = {}): Promise<Agent> {
  const logger = options.logger ?? silentLogger;
  const { provider } = await createAssemblyProvider(assembly, {
    logger,
    ...(options.provider !== undefined ? { provider: options.provider } : {}),
  });
  const { provider: _id, logger: _logger, ...agentOptions } = options;
  return createAgent({ ...agentOptions, provider, catalog: () => assembly.catalog, runtime: assembly.runtime, logger });
}

/** One started-to-be connector plugin. */
export interface AssemblyConnector {
  readonly id: string;
  /** The connector plugin's snapshot entry. */
  readonly entry: SnapshotEntry;
  readonly connector: Connector;
}

/** Creates (does not start) the connector of one enabled connector plugin. Throws `AgentSetupError` (`CONNECTOR_FAILED`) when it cannot. */
export async function createAssemblyConnector(
  source: PluginSource,
  entry: SnapshotEntry,
  logger: Logger = silentLogger,
): Promise<Connector> {
  const { definition, context } = await loadBundled(source, entry, logger);
  if (definition.connector === undefined)
    throw new AgentSetupError(`${entry.id} is a connector plugin but exports no connector; rebuild Trellis`, 'CONNECTOR_FAILED');
  try {
    return await definition.connector.create(context);
  } catch (error) {
    throw new AgentSetupError(`${entry.id}: ${error instanceof Error ? error.message : String(error)}`, 'CONNECTOR_FAILED');
  }
}

/** The enabled connector plugins, created (not started). Throws `AgentSetupError` when none is enabled and available. */
export async function createAssemblyConnectors(
  assembly: PluginSource,
  options: { readonly logger?: Logger; readonly loggerFor?: (id: string) => Logger } = {},
): Promise<AssemblyConnector[]> {
  const all = assembly.snapshot.plugins.filter((p) => p.kind === 'connector');
  const enabled = all.filter((p) => p.state === 'enabled');
  if (enabled.length === 0) {
    throw new AgentSetupError(
      `run needs a connector, and none is available: ${unusable(all, 'connector')}.\n` +
        'Use the messaging profile (--profile messaging, or [plugins] profile = "messaging") or [plugins.entries.telegram] enabled = true, and set TELEGRAM_BOT_TOKEN.',
      'CONNECTOR_FAILED',
    );
  }
  const out: AssemblyConnector[] = [];
  for (const entry of enabled) {
    const logger = options.loggerFor?.(entry.id) ?? options.logger ?? silentLogger;
    out.push({ id: entry.id, entry, connector: await createAssemblyConnector(assembly, entry, logger) });
  }
  return out;
}
