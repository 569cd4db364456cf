export { assemble } from './assemble.ts';
export type { AssembleOptions, Assembly } from './assemble.ts';
export { main } from './main.ts';
export { ConfigError, UsageError, FailedError, EXIT } from './errors.ts';
export type { CommandIO } from './io.ts';
export { TRELLIS_VERSION } from './bundled.gen.ts';
export { createAssemblyAgent, createAssemblyConnectors, AgentSetupError } from './agentHost.ts';
export type { AssemblyAgentOptions, AssemblyConnector } from './agentHost.ts';
export { createAgent, createConnectorHost } from '@trellis/agent';
export type { Agent, AgentSession, AgentTurn, AgentEvent, TurnResult, ToolStep, TurnUsage } from '@trellis/agent';
export type { AssemblyStatus, PluginStatus } from './status/pluginStatus.ts';
export type { HostStatus } from './status/HostStatus.ts';
export type { LifecycleState, LifecycleReport, LifecycleTransition, PartLifecycleReport, HealthCheckRecord } from '@trellis/sdk';
export { describeSecretIsolation } from '@trellis/sdk/internal';
export type { SecretIsolation } from '@trellis/sdk/internal';
export { startLiveHost } from './reload/startLiveHost.ts';
export type {
  LiveHost,
  LiveHostOptions,
  LiveHostStatus,
  LivePluginStatus,
  LiveToolOutcome,
  ReloadProblem,
  ReloadResult,
  ReloadTrigger,
} from './reload/startLiveHost.ts';
export type { GenerationDiff } from './reload/diffGenerations.ts';
