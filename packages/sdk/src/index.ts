export { PLUGIN_KINDS, SANDBOX_PROFILES, PROFILE_NAMES, CAPABILITIES, DISCOVERY_ROOTS, ISOLATION_MODES } from './kinds.ts';
export type { PluginKind, SandboxProfile, ProfileName, Capability, DiscoveryRoot, IsolationMode } from './kinds.ts';
export { ERROR_CODES } from './errorCodes.ts';
export { HOST_RESERVED_CODES, isHostReservedCode } from './errorCodes.ts';
export type { ErrorCode } from './errorCodes.ts';
export { PLUGIN_ID_PATTERN, TOOL_NAME_PATTERN, MAX_MANIFEST_BYTES } from './manifestLimits.ts';
export type { PluginManifest, PluginManifestInput, PluginRuntime, ManifestTool } from './manifest.ts';
export { formatIssues, formatKeyPath, issueToString } from './formatIssues.ts';
export type { SchemaIssue } from './formatIssues.ts';
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
export { definePlugin } from './definePlugin.ts';
export type {
  PluginDefinition,
  PluginSettings,
  PluginContext,
  ToolSpec,
  BundledPluginDescriptor,
  PluginDefinitionInput,
  PluginContract,
} from './definePlugin.ts';
export { isPathInside, formatMode, isWorldWritable } from './paths.ts';
export { runProcess, canLimitResources } from './runProcess.ts';
export type { RunProcessOptions, RunProcessResult } from './runProcess.ts';
export {
  launchChild,
  prepareChildLauncher,
  describeSecretIsolation,
  isolatedCommandLine,
  killGroup,
  trackGroup,
  killTrackedGroups,
  untrackGroup,
  IsolationUnavailableError,
  PRLIMIT_PATH,
} from './launchChild.ts';
export { SAFE_CHILD_ENV, findEnvReferences, resolveHostEnvGrant, pickHostEnv } from './hostEnvGrant.ts';
export type { HostEnvGrant, HostEnvVariable } from './hostEnvGrant.ts';
export type { LaunchChildOptions, LaunchedChild, SecretIsolation, ChildIsolationMode } from './launchChild.ts';
export { compileToolGlob, matchesToolGlob } from './compileToolGlob.ts';
export { lazyCrypto, sha256Hex } from './lazyCrypto.ts';
export { canonicalJson, hashJson } from './canonicalJson.ts';
export { checkSchemaSafety, DEFAULT_SCHEMA_LIMITS } from './checkSchemaSafety.ts';
export type { SchemaLimits, SchemaSafety } from './checkSchemaSafety.ts';
export { nestsDeeperThan } from './nestsDeeperThan.ts';
export { isHandleAt, descriptorPath, hasDescriptorPaths } from './isHandleAt.ts';
export { isUnsafeFolderMode } from './paths.ts';
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
export { closestNames, closestName } from './closestNames.ts';
export type { ClosestNamesOptions } from './closestNames.ts';
export { compileGlob } from './compileGlob.ts';
export type { GlobOptions } from './compileGlob.ts';
export { describeFileKind } from './describeFileKind.ts';
export { LifecycleMachine, LIFECYCLE_TRANSITIONS } from './lifecycle.ts';
export type {
  LifecycleState,
  LifecycleReport,
  PartLifecycleReport,
  LifecycleTransition,
  HealthCheckRecord,
  LifecycleMachineOptions,
} from './lifecycle.ts';
