// `@trellis/runtime/external`: the process, script and HTTP adapters for external plugins.
// Off the main entry: a host loads them only when an external plugin is enabled.
export { createProcessImplementation, MAX_PROTOCOL_LINE_BYTES } from './adapters/createProcessImplementation.ts';
export type { ProcessImplementationOptions, ProcessRuntime } from './adapters/createProcessImplementation.ts';
export { createScriptImplementation, parseScriptOutput } from './adapters/createScriptImplementation.ts';
export type { ScriptImplementationOptions, ScriptRuntime, ScriptRequest } from './adapters/createScriptImplementation.ts';
export { createHttpImplementation, checkHttpEndpoint } from './adapters/createHttpImplementation.ts';
export type { HttpImplementationOptions, HttpRuntime } from './adapters/createHttpImplementation.ts';
export { createExternalImplementation } from './adapters/createExternalImplementation.ts';
export type {
  ExternalPluginEntry,
  ExternalPluginOverrides,
  ExternalImplementationOptions,
} from './adapters/createExternalImplementation.ts';
export { killTrackedGroups as killPluginProcessGroups } from './adapters/processGroups.ts';
