// What a plugin author imports: kinds, error codes, the manifest types, definePlugin/defineTool,
// outcomes and ToolError, the logger, and the contracts of tool sources, providers and connectors.
// Helpers the host itself uses (hashing, path and process checks, globs, schema limits…) live in
// `@trellis/sdk/internal`; `src/publicExports.test.ts` keeps this entry to that list.
export { PLUGIN_KINDS, SANDBOX_PROFILES, PROFILE_NAMES, CAPABILITIES, DISCOVERY_ROOTS, ISOLATION_MODES } from './kinds.ts';
export type { PluginKind, SandboxProfile, ProfileName, Capability, DiscoveryRoot, IsolationMode } from './kinds.ts';
export { ERROR_CODES } from './errorCodes.ts';
export { HOST_RESERVED_CODES, isHostReservedCode } from './errorCodes.ts';
export type { ErrorCode } from './errorCodes.ts';
export { PLUGIN_ID_PATTERN, TOOL_NAME_PATTERN, MAX_MANIFEST_BYTES } from './manifestLimits.ts';
export type { PluginManifest, PluginManifestInput, PluginRuntime, ManifestTool } from './manifest.ts';
export { silentLogger } from './logger.ts';
export type { Logger } from './logger.ts';
export { okOutcome, failOutcome, ToolError, isToolError } from './outcome.ts';
export type { ToolOutcome, ToolFailure } from './outcome.ts';
export { defineTool, resolveContract, DEFAULT_TOOL_CONTRACT } from './defineTool.ts';
export type {
  ToolContract,
  ToolContext,
  ToolDefinition,
  ToolExample,
  Canonicalized,
  HostServices,
  HostPluginView,
  HostToolHit,
  WorkspacePaths,
  ToolProgress,
} from './defineTool.ts';
export { definePlugin, definePluginCode } from './definePlugin.ts';
export type {
  PluginDefinition,
  PluginCode,
  ToolImplementation,
  PluginSettings,
  PluginContext,
  ToolSpec,
  PluginDefinitionInput,
  PluginContract,
} from './definePlugin.ts';
export type { ToolSource, ToolSourceFactory, ToolSourceReason, ToolSourceStartOptions, DynamicToolSpec } from './toolSource.ts';
export { ProviderError, isProviderError } from './provider.ts';
export type {
  Provider,
  ProviderDefinition,
  ProviderRequest,
  ProviderEvent,
  ProviderTool,
  ProviderToolCall,
  ProviderUsage,
  FinishReason,
  ChatMessage,
} from './provider.ts';
export type { Connector, ConnectorDefinition, ConnectorHost, InboundMessage, ReplyEvent } from './connector.ts';
export type { LifecycleState, LifecycleReport, PartLifecycleReport, LifecycleTransition, HealthCheckRecord } from './lifecycle.ts';
export type { KeepAliveStore, KeepAliveLease } from './keepAlive.ts';
