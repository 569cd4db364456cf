export { createAgent, capText } from './createAgent.ts';
export type { Agent, AgentOptions, AgentSession, AgentTurn } from './createAgent.ts';
export type { AgentEvent, ToolStep, TurnResult, TurnUsage, TurnFinishReason } from './AgentEvent.ts';
export { DEFAULT_TOOL_BUDGET, DEFAULT_PINNED_TOOLS, FIND_TOOLS_NAME } from './toolBudget.ts';
export type { ToolBudget } from './toolBudget.ts';
export { createConnectorHost } from './createConnectorHost.ts';
export type { ConnectorHostOptions, ManagedConnectorHost } from './createConnectorHost.ts';
