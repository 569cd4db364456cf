export type {
  PluginImplementation,
  ImplementationCall,
  ImplementationOutcome,
  CanonicalizeContext,
  LifecycleState,
} from './PluginImplementation.ts';
export { createToolRuntime } from './ToolRuntime.ts';
export type {
  ToolRuntime,
  ToolRequest,
  InvokeOptions,
  ApprovalRequest,
  ApprovalHook,
  ImplementationResolver,
  CreateToolRuntimeOptions,
} from './ToolRuntime.ts';
export type { RuntimeCatalog, RuntimeToolDescriptor, RuntimeToolLookup, RuntimeReason } from './RuntimeCatalog.ts';
export type {
  ExecutionEvent,
  ExecutionEventType,
  ExecutionHook,
  LookupEvent,
  ValidateEvent,
  CapabilityEvent,
  CanonicalizeEvent,
  PolicyEvent,
  AttemptEvent,
  OutcomeEvent,
} from './ExecutionEvent.ts';
export { createFileAuditLog } from './AuditLog.ts';
export type { AuditRecord, AuditSink } from './AuditLog.ts';
export { createSchemaValidatorCache, formatSchemaError } from './SchemaValidatorCache.ts';
export type { SchemaValidatorCache, CompiledSchema, UnsafeSchema } from './SchemaValidatorCache.ts';
export { DEFAULT_SCHEMA_LIMITS } from './checkSchemaSafety.ts';
export type { SchemaLimits } from './checkSchemaSafety.ts';
export { failureFromThrown } from './outcomeFromThrown.ts';
export { createBundledImplementation, DEFAULT_WORKER_RESOURCE_LIMITS } from './createBundledImplementation.ts';
export type { CreateBundledImplementationOptions } from './createBundledImplementation.ts';
export { createProcessImplementation, MAX_PROTOCOL_LINE_BYTES } from './adapters/createProcessImplementation.ts';
export type { ProcessImplementationOptions, ProcessRuntime } from './adapters/createProcessImplementation.ts';
export { createScriptImplementation, parseScriptOutput } from './adapters/createScriptImplementation.ts';
export type { ScriptImplementationOptions, ScriptRuntime, ScriptRequest } from './adapters/createScriptImplementation.ts';
export { createHttpImplementation, checkHttpEndpoint } from './adapters/createHttpImplementation.ts';
export type { HttpImplementationOptions, HttpRuntime } from './adapters/createHttpImplementation.ts';
export { createExternalImplementation } from './adapters/createExternalImplementation.ts';
export type { ExternalPluginEntry, ExternalPluginOverrides, ExternalImplementationOptions } from './adapters/createExternalImplementation.ts';
