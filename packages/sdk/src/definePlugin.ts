import type { z } from 'zod';
import type { Logger } from './logger.ts';
import type { ToolDefinition, ToolContract, ToolExample, WorkspacePaths } from './defineTool.ts';
import type { PluginManifest } from './manifest.ts';
import type { ToolSourceFactory } from './toolSource.ts';
import type { ProviderDefinition } from './provider.ts';
import type { ConnectorDefinition } from './connector.ts';
import type { KeepAliveStore } from './keepAlive.ts';

/** A plugin's settings: read from `[runtime.tools.<key>]`, deep-merged over the schema's defaults. */
export interface PluginSettings<Settings = unknown> {
  /** The `<key>` of `[runtime.tools.<key>]`, e.g. `fs`. */
  readonly key: string;
  /** Must accept `{}` and fill in safe defaults for everything. */
  readonly schema: z.ZodType<Settings>;
}

/** What `setup` and `dispose` receive. */
export interface PluginContext<Settings = unknown> {
  readonly config: Settings;
  readonly logger: Logger;
  readonly workspace: WorkspacePaths;
  readonly env: Readonly<Record<string, string | undefined>>;
  /**
   * Values kept alive across a live host's generations (connections an unchanged part keeps using);
   * see `KeepAliveStore`. Absent in hosts that do not offer one: make and close values yourself.
   */
  readonly keepAlive?: KeepAliveStore;
  /**
   * `[plugins.entries.<id>] max_restarts`, when the user set it: how many times a part the plugin
   * supervises itself (a bridged MCP server) may be restarted before it is given up (`disabled`).
   */
  readonly maxRestarts?: number;
}

/** A bundled plugin's implementation: the default export of nothing, the named `plugin` export of its package. */
export interface PluginDefinition<Settings = unknown> {
  /**
   * The manifest this code implements. `id` is required and must equal the id in `plugin.toml`
   * (it ties the code to its manifest); every other field is optional, `plugin.toml` is their source
   * of truth, and the build fails when one given here disagrees with it.
   */
  readonly manifest: Pick<PluginManifest, 'id'> & Partial<PluginManifest>;
  readonly settings?: PluginSettings<Settings>;
  // Tools are heterogeneous in their input types; each was checked by defineTool.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly tools: ReadonlyArray<ToolDefinition<any, any, Settings>>;
  /** A provider plugin's model (kind `provider`); see `ProviderDefinition`. */
  readonly provider?: ProviderDefinition<Settings>;
  /** A connector plugin's channel (kind `connector`); see `ConnectorDefinition`. */
  readonly connector?: ConnectorDefinition<Settings>;
  /** Runs once, before the first call to any of the plugin's tools. */
  setup?(ctx: PluginContext<Settings>): void | Promise<void>;
  /** Runs when the host shuts down, if setup ran. */
  dispose?(ctx: PluginContext<Settings>): void | Promise<void>;
  /**
   * Tools learned at run time (e.g. from MCP servers), besides the static `tools`. The host starts
   * the source, lists its tools into the catalog, refreshes them on `onChanged`, and closes it on
   * shutdown.
   */
  readonly toolSource?: ToolSourceFactory<Settings>;
}

/** What `definePlugin` accepts: a plugin with a provider or connector may leave out `tools`. */
export type PluginDefinitionInput<Settings = unknown> = Omit<PluginDefinition<Settings>, 'tools'> & {
  readonly tools?: PluginDefinition<Settings>['tools'];
};

/** A tool as the host runs it: its name and code. Its schema, description and contract are embedded by the build. */
export interface ToolImplementation<Settings = unknown> {
  readonly name: string;
  // Heterogeneous inputs, each checked by defineTool where the tool is declared.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  canonicalize?: ToolDefinition<any, any, Settings>['canonicalize'];
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  run: ToolDefinition<any, any, Settings>['run'];
}

/**
 * What the host uses of a bundled plugin when it runs: the code, without the manifest, the
 * settings schema or the tools' schemas (the build embeds those as data). A `PluginDefinition` is
 * one; a package may also export one alone as `./code` (see `definePluginCode`).
 */
export interface PluginCode<Settings = unknown> {
  readonly tools: ReadonlyArray<ToolImplementation<Settings>>;
  readonly provider?: ProviderDefinition<Settings>;
  readonly connector?: ConnectorDefinition<Settings>;
  setup?(ctx: PluginContext<Settings>): void | Promise<void>;
  dispose?(ctx: PluginContext<Settings>): void | Promise<void>;
  readonly toolSource?: ToolSourceFactory<Settings>;
}

/**
 * Declares a bundled plugin's code entry: the same tools' code as its `definePlugin`, with none
 * of their schemas, so the host's first call to the plugin loads neither the schemas nor zod. Export
 * it as `export const plugin = definePluginCode({...})` from the module the package exports as
 * `./code`. The build checks it against the definition: the same tool names, and the very same
 * `run`, `canonicalize`, `setup`, `dispose`, `toolSource`, `provider` and `connector` values.
 */
export function definePluginCode<Settings = unknown>(code: PluginCode<Settings>): PluginCode<Settings> {
  return code;
}

/** The contracts a bundled plugin implements besides tools, as the build records them. */
export type PluginContract = 'provider' | 'connector';

/** Declares a bundled plugin. Export it as `export const plugin = definePlugin({...})`. */
export function definePlugin<Settings = unknown>(definition: PluginDefinitionInput<Settings>): PluginDefinition<Settings> {
  return definition.tools === undefined ? { ...definition, tools: [] } : (definition as PluginDefinition<Settings>);
}

/** A tool as the build embeds it: JSON only, computed from a `ToolDefinition` at build time. */
export interface ToolSpec {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Readonly<Record<string, unknown>>;
  readonly outputSchema?: Readonly<Record<string, unknown>>;
  readonly tags: readonly string[];
  readonly examples: readonly ToolExample[];
  readonly contract: ToolContract;
}

/**
 * A bundled plugin as the generated index describes it: the manifest and tool specs are embedded
 * data, so startup reads no file and imports no plugin code; `load` imports the implementation
 * on first use.
 */
export interface BundledPluginDescriptor {
  readonly packageName: string;
  readonly manifest: PluginManifest;
  readonly tools: readonly ToolSpec[];
  readonly settings?: {
    readonly key: string;
    readonly jsonSchema: Readonly<Record<string, unknown>>;
    readonly defaults: Readonly<Record<string, unknown>>;
  };
  /**
   * sha256 (hex) of the manifest's stable JSON, computed at build time so a start that hashes
   * nothing never loads node:crypto. When absent the registry computes the same digest.
   */
  readonly manifestSha256?: string;
  /** The contracts the plugin's code implements besides tools (`definePlugin({ provider })`…); absent means none. */
  readonly contracts?: readonly PluginContract[];
  /** Imports the plugin's code: its `./code` entry when the package has one, else its definition. */
  load(): Promise<PluginCode>;
  /** True when the plugin's definition has a `toolSource`: its tools are learned at run time. */
  readonly dynamicTools?: boolean;
  /** URL of the module `load` imports, so a worker thread can import it too (worker isolation). */
  readonly moduleUrl?: string;
  /**
   * The tools whose definition has a `canonicalize` hook, as the build found them; absent when
   * unknown. With it, the runtime knows before the plugin loads that other tools need no hook.
   */
  readonly canonicalizing?: readonly string[];
}
