// `@trellis/sdk/internal`: helpers Trellis's own packages and bundled plugins share (hashing, path
// and process checks, child launching, globs, nearest names, schema limits). Not part of the plugin
// API: they change with the host, without notice. A plugin author needs only `@trellis/sdk`.
export type { BundledPluginDescriptor } from './definePlugin.ts';
export { formatIssues, formatKeyPath, issueToString } from './formatIssues.ts';
export type { SchemaIssue } from './formatIssues.ts';
export { isPathInside, formatMode, isWorldWritable, isUnsafeFolderMode } from './paths.ts';
export { runProcess, canLimitResources } from './runProcess.ts';
export type { RunProcessOptions, RunProcessResult } from './runProcess.ts';
export {
  launchChild,
  startChild,
  acquireSpawnHelper,
  spawnHelperReady,
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
export type { LaunchChildOptions, LaunchedChild, SecretIsolation, ChildIsolationMode } from './launchChild.ts';
export type { StartedChild } from './spawnHelper.ts';
export { SAFE_CHILD_ENV, findEnvReferences, resolveHostEnvGrant, pickHostEnv } from './hostEnvGrant.ts';
export type { HostEnvGrant, HostEnvVariable } from './hostEnvGrant.ts';
export { compileToolGlob, matchesToolGlob } from './compileToolGlob.ts';
export { lazyCrypto, sha256Hex } from './lazyCrypto.ts';
export { canonicalJson, hashJson } from './canonicalJson.ts';
export { keptByInputs, samePlainData } from './samePlainData.ts';
export { loadOnce } from './loadOnce.ts';
export { checkSchemaSafety, DEFAULT_SCHEMA_LIMITS } from './checkSchemaSafety.ts';
export type { SchemaLimits, SchemaSafety } from './checkSchemaSafety.ts';
export { nestsDeeperThan } from './nestsDeeperThan.ts';
export { isHandleAt, descriptorPath, hasDescriptorPaths } from './isHandleAt.ts';
export { closestNames, closestName } from './closestNames.ts';
export type { ClosestNamesOptions } from './closestNames.ts';
export { compileGlob } from './compileGlob.ts';
export type { GlobOptions } from './compileGlob.ts';
export { describeFileKind } from './describeFileKind.ts';
export { LifecycleMachine, STABLE_UPTIME_MS } from './lifecycle.ts';
export type { LifecycleMachineOptions } from './lifecycle.ts';
export { Listeners } from './listeners.ts';
export { createKeepAliveHost } from './keepAlive.ts';
export type { KeepAliveHost } from './keepAlive.ts';
export { runSteps, runStepsPausing, createPacer } from './steps.ts';
export type { Steps, Pause, PacerOptions } from './steps.ts';
