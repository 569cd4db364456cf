export type { PluginImplementation, ImplementationCall, LifecycleState } from './PluginImplementation.ts';
export { createProcessImplementation, MAX_PROTOCOL_LINE_BYTES } from './adapters/createProcessImplementation.ts';
export type { ProcessImplementationOptions, ProcessRuntime } from './adapters/createProcessImplementation.ts';
