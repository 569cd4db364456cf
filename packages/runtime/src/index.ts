export type { PluginImplementation, ImplementationCall, LifecycleState } from './PluginImplementation.ts';
