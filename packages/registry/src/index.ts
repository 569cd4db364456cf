export type {
  PluginState,
  Reason,
  CandidateSource,
  SnapshotEntry,
  PluginRegistrySnapshot,
  FileRootSpec,
  BundledRootSpec,
  RootSpec,
  FileType,
  StatFacts,
  FolderFacts,
  ReadRefusal,
  ExternalCandidateFacts,
  BundledCandidateFacts,
  CandidateFacts,
  DiscoveryResult,
  CheckResult,
  AdmissionCheck,
  AdmittedCandidate,
  AdmissionPolicy,
  DecisionStep,
  DecidedCandidate,
  ProfileDefinition,
  ProfilesData,
} from './types.ts';
export { resolveDiscoveryRoots, BUNDLED_ROOT } from './resolveDiscoveryRoots.ts';
export type { ResolveDiscoveryRootsOptions } from './resolveDiscoveryRoots.ts';
export { discoverCandidates, toStatFacts, MANIFEST_FILE_NAME, MAX_PLUGIN_DEPTH, IGNORED_FOLDER_NAMES } from './discoverCandidates.ts';
export type { DiscoverCandidatesOptions } from './discoverCandidates.ts';
export type { ParsedManifest } from './parseManifest.ts';
export { admitCandidate } from './admitCandidate.ts';
/** Shared with config-file admission; lives in the sdk so @trellis/config can use it too. */
export { isUnsafeFolderMode } from '@trellis/sdk/internal';
export { expandProfile } from './expandProfile.ts';
export type { ParseProfilesResult } from './parseProfiles.ts';
export { deepMerge } from './deepMerge.ts';
export { findCommandsOnPath } from './findCommandsOnPath.ts';
export { resolvePluginSettings } from './resolvePluginSettings.ts';
export type { ResolvePluginSettingsOptions, PluginSettingsResult } from './resolvePluginSettings.ts';
export { decide, describeSource } from './decide.ts';
export type { DecideOptions } from './decide.ts';
export type { CommandLineSwitches } from './decide.ts';
export {
  buildSnapshot,
  serializeSnapshot,
  compareEntries,
  orderDecided,
  toSnapshotEntry,
  entryJson,
  bundledManifestDigest,
} from './buildSnapshot.ts';
export type { BuildSnapshotOptions } from './buildSnapshot.ts';
/** The sdk's `canonicalJson`, under the name the registry has always exported it by. */
export { canonicalJson as stableStringify } from '@trellis/sdk/internal';
export { buildPluginRegistrySnapshot, buildPluginRegistrySnapshotInSteps } from './buildPluginRegistrySnapshot.ts';
export { createRegistryBuildCache } from './RegistryBuildCache.ts';
export { SETTLED_MS } from './ManifestReadMemo.ts';
export { isCandidateUnchanged } from './isCandidateUnchanged.ts';
export type { RegistryBuildCache } from './RegistryBuildCache.ts';
export type { BuildPluginRegistrySnapshotOptions, KeptManifest, PluginRegistryResult } from './buildPluginRegistrySnapshot.ts';
export { explainPlugin, formatExplanation } from './explainPlugin.ts';
export type { PluginExplanation, CandidateExplanation } from './explainPlugin.ts';
export { prepareRegistry, hasSettingsPatches } from './prepareRegistry.ts';
export type { PrepareRegistryOptions } from './prepareRegistry.ts';
