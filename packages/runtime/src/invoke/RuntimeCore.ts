import { type Logger } from '@trellis/sdk';
import type { AuditSink } from '../AuditLog.ts';
import { DeadlineScheduler } from '../DeadlineScheduler.ts';
import type { ExecutionEvent, ExecutionHook } from '../ExecutionEvent.ts';
import type { PluginImplementation } from '../PluginImplementation.ts';
import type { RuntimeCatalog, RuntimeToolDescriptor } from '../RuntimeCatalog.ts';
import type { PrecompiledValidator } from '../schemaCheck.ts';
import type { SchemaValidatorCache } from '../SchemaValidatorCache.ts';
import type { ApprovalHook, ImplementationResolver } from '../ToolRuntime.ts';
import type { CallContext } from './CallContext.ts';
import { noop } from './Invocation.ts';
import { PluginGate } from './PluginGate.ts';
import { resumeStages } from './runStages.ts';
import { ToolEntry, type RuntimeSettings } from './ToolEntry.ts';
import { WaitList } from './WaitList.ts';

/** What one runtime hands its core; everything else the core derives. */
export interface RuntimeCoreOptions {
  readonly settings: RuntimeSettings;
  readonly catalog: RuntimeCatalog;
  readonly implementations: ImplementationResolver;
  readonly approve: ApprovalHook | undefined;
  readonly logger: Logger;
  readonly audit: AuditSink | undefined;
  readonly hooks: readonly ExecutionHook[];
  /** A shared validator cache's loader (see `CreateToolRuntimeOptions.loadValidators`). */
  readonly loadValidators?: () => Promise<SchemaValidatorCache>;
  readonly precompiled?: ReadonlyMap<object, PrecompiledValidator> | undefined;
}

/**
 * The state one runtime shares between its calls: tool entries, plugin gates, hooks, the deadline
 * scheduler and the lazily loaded schema validator. Each runtime owns one; nothing lives at module
 * level, so two runtimes in one process share nothing (but a validator cache they are both given).
 */
export class RuntimeCore {
  readonly settings: RuntimeSettings;
  readonly catalog: RuntimeCatalog;
  readonly approve: ApprovalHook | undefined;
  readonly logger: Logger;
  readonly audit: AuditSink | undefined;
  readonly scheduler = new DeadlineScheduler();
  readonly gates = new Map<string, PluginGate>();
  /** Validators compiled ahead of time, by input schema object (see `CreateToolRuntimeOptions.precompiled`). */
  readonly precompiled: ReadonlyMap<object, PrecompiledValidator> | undefined;
  hooks: readonly ExecutionHook[];
  disposed = false;
  /** Loaded with the first call's validation (see `loadValidators`). */
  validators: SchemaValidatorCache | undefined;
  /** Why the last validator load failed; the calls that waited for it end with it. */
  validatorsFailure: unknown;
  private validatorsLoading: Promise<SchemaValidatorCache> | undefined;
  private validatorsWaiting: WaitList | undefined;
  private readonly entries = new Map<string, ToolEntry>();
  private readonly resolver: ImplementationResolver;
  private readonly loadSharedValidators: (() => Promise<SchemaValidatorCache>) | undefined;
  // Made on the first call without an id, so creating a runtime never loads node:crypto.
  private idPrefix: string | undefined;
  private idCounter = 0;

  constructor(options: RuntimeCoreOptions) {
    this.settings = options.settings;
    this.catalog = options.catalog;
    this.resolver = options.implementations;
    this.approve = options.approve;
    this.logger = options.logger;
    this.audit = options.audit;
    this.hooks = options.hooks;
    this.loadSharedValidators = options.loadValidators;
    this.precompiled = options.precompiled;
  }

  /**
   * The caller's id for a call, or a fresh `call-<random>-<n>`. The prefix tells runtimes apart in
   * one audit log; it is no secret, so Math.random: node:crypto would load on the first call (5–15
   * ms, inside a cold burst).
   */
  callIdFor(given: unknown): string {
    if (typeof given === 'string' && given !== '') return given;
    this.idPrefix ??= `call-${Math.floor(Math.random() * 2 ** 32)
      .toString(16)
      .padStart(8, '0')}-`;
    this.idCounter += 1;
    return this.idPrefix + this.idCounter;
  }

  /** Gives the event to every hook; a hook that throws or rejects is logged and the call goes on. */
  emit(event: ExecutionEvent): void {
    for (const hook of this.hooks) {
      try {
        const result = hook(event);
        if (result !== undefined && typeof (result as Promise<void>).then === 'function') {
          (result as Promise<void>).then(undefined, (error: unknown) => this.hookFailed(event, error));
        }
      } catch (error) {
        this.hookFailed(event, error);
      }
    }
  }

  /** The tool's entry, computed on its first call and again when the catalog gives a new descriptor. */
  entryFor(descriptor: RuntimeToolDescriptor): ToolEntry {
    let entry = this.entries.get(descriptor.name);
    if (entry === undefined || entry.descriptor !== descriptor) {
      entry = new ToolEntry(descriptor, this.gateFor(descriptor.plugin), this.settings);
      this.entries.set(descriptor.name, entry);
    }
    return entry;
  }

  /** The plugin's implementation, asked of the resolver once; a resolver's throw propagates. */
  implementationOf(gate: PluginGate): PluginImplementation | undefined {
    if (!gate.resolved) {
      const resolver = this.resolver;
      gate.impl = typeof resolver === 'function' ? resolver(gate.id) : resolver.get(gate.id);
      gate.resolved = true;
    }
    return gate.impl;
  }

  /** Runs a parked call on (see `CallContext.park`). */
  resume(ctx: CallContext): void {
    resumeStages(ctx);
  }

  /** The calls waiting for the validator's first load, which this starts. */
  validatorsWait(): WaitList {
    this.validatorsWaiting ??= new WaitList(this.loadValidators());
    return this.validatorsWaiting;
  }

  /** The calls waiting for the plugin's one shared start, which this starts. */
  startWait(gate: PluginGate, impl: PluginImplementation): WaitList {
    gate.startWaiting ??= new WaitList(this.startOnce(gate, impl));
    return gate.startWaiting;
  }

  /** The one shared start of a plugin that is not loaded yet; its failure surfaces on the calls. */
  startOnce(gate: PluginGate, impl: PluginImplementation): Promise<void> {
    gate.starting ??= Promise.resolve()
      .then(() => impl.start())
      .catch(noop);
    return gate.starting;
  }

  /** Starts an in-process implementation that canonicalizes (it must load to say so); errors surface on the call. */
  prefetch(gate: PluginGate): void {
    let impl: PluginImplementation | undefined;
    try {
      impl = this.implementationOf(gate);
    } catch {
      return; // reported by the call's own resolution stage
    }
    if (impl?.canonicalize === undefined || impl.canonicalizes === undefined) return;
    const state = impl.state();
    if (state !== 'unloaded' && state !== 'initializing') return;
    void this.startOnce(gate, impl);
  }

  /**
   * ajv and re2js load with the first call's validation, not at startup: a host that only lists
   * tools never pays for them. Single flight: concurrent first calls share one import and one
   * cache (a cache each would compile every schema once per call and stall a cold burst).
   */
  loadValidators(): Promise<SchemaValidatorCache> {
    const load = this.loadSharedValidators ?? (() => import('../SchemaValidatorCache.ts').then((m) => m.createSchemaValidatorCache()));
    this.validatorsLoading ??= load().then(
      (cache) => (this.validators = cache),
      (error: unknown) => {
        // The calls that waited end with this error; the next call tries again.
        this.validatorsFailure = error;
        this.validatorsLoading = undefined;
        this.validatorsWaiting = undefined;
        throw error;
      },
    );
    return this.validatorsLoading;
  }

  private gateFor(pluginId: string): PluginGate {
    let gate = this.gates.get(pluginId);
    if (gate === undefined) {
      gate = new PluginGate(pluginId, this.settings.maxConcurrency);
      this.gates.set(pluginId, gate);
    }
    return gate;
  }

  private hookFailed(event: ExecutionEvent, error: unknown): void {
    this.logger.warn(`an execution hook failed on the ${event.type} event of ${event.tool}; the call goes on`, {
      callId: event.callId,
      error: error instanceof Error ? error.message : String(error),
    });
  }
}
