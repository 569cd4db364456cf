import { firstMatchingGlob } from '../compileToolGlob.ts';
import type { RuntimeToolDescriptor } from '../RuntimeCatalog.ts';
import type { CompiledSchema, UnsafeSchema } from '../SchemaValidatorCache.ts';
import type { PluginGate } from './PluginGate.ts';

export const NO_STRINGS: readonly string[] = Object.freeze([]);

/** The `[runtime]` settings the stages read, derived once per runtime. */
export interface RuntimeSettings {
  readonly granted: ReadonlySet<string>;
  readonly policy: { readonly allow: readonly string[]; readonly deny: readonly string[]; readonly ask: readonly string[] };
  readonly allow: ReadonlyArray<(name: string) => boolean>;
  readonly maxRetries: number;
  readonly capMs: number;
  readonly maxOutputBytes: number;
  readonly maxConcurrency: number;
  readonly backoffMs: number;
}

/** Everything about a tool that does not change between calls, computed once. */
export class ToolEntry {
  /** The compiled input schema; set by the validate stage on the tool's first call. */
  schema: CompiledSchema | UnsafeSchema | undefined;
  readonly required: readonly string[];
  readonly missing: readonly string[];
  readonly denied: string | undefined;
  readonly deniedRule: string | undefined;
  readonly ask: 'none' | 'policy' | 'contract';
  readonly askRule: string | undefined;
  readonly maxAttempts: number;
  readonly deadlineMs: number;

  constructor(
    readonly descriptor: RuntimeToolDescriptor,
    readonly gate: PluginGate,
    settings: RuntimeSettings,
  ) {
    const contract = descriptor.contract;
    const name = descriptor.name;
    this.required = contract.capabilities.length === 0 ? NO_STRINGS : [...contract.capabilities];
    const missing = this.required.filter((capability) => !settings.granted.has(capability));
    this.missing = missing.length === 0 ? NO_STRINGS : missing;
    const deny = firstMatchingGlob(settings.policy.deny, name);
    if (deny !== undefined) {
      this.denied = `${name} is denied by [runtime.policy] deny = "${deny}" in runtime.toml; remove that pattern to allow it`;
      this.deniedRule = deny;
    } else if (!settings.allow.some((matches) => matches(name))) {
      this.denied = `${name} is not in [runtime.policy] allow (${settings.policy.allow.map((p) => `"${p}"`).join(', ') || 'empty'}); add a pattern that matches it to allow it`;
    }
    const askRule = firstMatchingGlob(settings.policy.ask, name);
    this.askRule = askRule;
    this.ask = askRule !== undefined ? 'policy' : contract.approval === 'ask' ? 'contract' : 'none';
    const retries = typeof contract.maxRetries === 'number' ? contract.maxRetries : settings.maxRetries;
    this.maxAttempts = Math.max(0, Math.floor(retries)) + 1;
    const contractMs = typeof contract.deadlineMs === 'number' && contract.deadlineMs > 0 ? contract.deadlineMs : Number.POSITIVE_INFINITY;
    this.deadlineMs = Math.min(contractMs, settings.capMs);
  }
}
