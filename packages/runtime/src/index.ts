export type {
  PluginImplementation,
  ImplementationCall,
  ImplementationOutcome,
  CanonicalizeContext,
  LifecycleState,
  ImplementationHealth,
} from './PluginImplementation.ts';
export { createToolRuntime } from './ToolRuntime.ts';
export type {
  ToolRuntime,
  ToolRequest,
  InvokeOptions,
  ApprovalRequest,
  ApprovalHook,
  ApprovalRefusal,
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
export type { SchemaValidatorCache, SchemaTrust, CompiledSchema, UnsafeSchema } from './SchemaValidatorCache.ts';
export type { PrecompiledValidator } from './schemaCheck.ts';
export { DEFAULT_SCHEMA_LIMITS } from '@trellis/sdk/internal';
export type { SchemaLimits } from '@trellis/sdk/internal';
export { failureFromThrown } from './outcomeFromThrown.ts';
export { createBundledImplementation, DEFAULT_WORKER_RESOURCE_LIMITS } from './createBundledImplementation.ts';
export type { CreateBundledImplementationOptions } from './createBundledImplementation.ts';
export { shareImplementation } from './shareImplementation.ts';
export type { SharedImplementation } from './shareImplementation.ts';
export { withAuditFields } from './AuditLog.ts';
