import type { z } from 'zod';
import type { IsolationMode, SandboxProfile } from './kinds.ts';
import type { Logger } from './logger.ts';

/** What a tool promises about how it runs. The runtime enforces deadline, retries and isolation. */
export interface ToolContract {
  /** True when the tool changes something outside the host (files, processes, the network). */
  readonly sideEffects: boolean;
  /** Capabilities the tool needs; the call is refused unless `[runtime] capabilities` grants all. */
  readonly capabilities: readonly string[];
  readonly sandbox: SandboxProfile;
  /** Longest a call may take, in milliseconds, before it ends with `TIMEOUT`. Capped by `[runtime] tool_timeout_seconds`. */
  readonly deadlineMs: number;
  /** Extra attempts for retryable failures. */
  readonly maxRetries: number;
  /** True when running the call twice has the same effect as once; only idempotent calls are retried after dispatch. */
  readonly idempotent: boolean;
  /**
   * Where the tool runs, shown by `trellis tools describe` as "runs in". `inline`: on the host's
   * thread, for cheap work bounded by input caps. `worker`: on the runtime's worker pool; the
   * worker imports the plugin module itself and is terminated (and replaced) at the deadline, so
   * a call whose cost grows with untrusted input cannot hold the host. Declare `worker` for any
   * such tool; the runtime does the running. `process` is set by the host for external plugins.
   */
  readonly isolation: IsolationMode;
  /** `ask`: the host must get approval before each call. */
  readonly approval: 'auto' | 'ask';
}

/** The contract a tool gets when it states nothing: read-only, 30 s, no retries, inline. */
export const DEFAULT_TOOL_CONTRACT: ToolContract = {
  sideEffects: false,
  capabilities: [],
  sandbox: 'no-isolation',
  deadlineMs: 30_000,
  maxRetries: 0,
  idempotent: true,
  isolation: 'inline',
  approval: 'auto',
};

/** One plugin as the host sees it, for introspection tools. Structurally a snapshot entry. */
export interface HostPluginView {
  readonly id: string;
  readonly kind: string;
  readonly state: string;
  readonly source: { readonly root: string; readonly priority: number; readonly manifestPath: string | null };
  readonly reasons: ReadonlyArray<{ readonly code: string; readonly message: string }>;
  readonly warnings: ReadonlyArray<{ readonly code: string; readonly message: string }>;
}

/** One ranked search hit over the catalog. */
export interface HostToolHit {
  readonly name: string;
  readonly plugin: string;
  readonly description: string;
  readonly score: number;
}

/** What the host lends tools that look at the host itself (builtin-tools). */
export interface HostServices {
  /** Every plugin in the snapshot, in snapshot order. */
  plugins(): readonly HostPluginView[];
  /** Every candidate with this id across roots, with reasons and a decision trace; empty when unknown. */
  explainPlugin(id: string): unknown;
  /** Ranked search over the catalog's offered tools. */
  searchTools(query: string, options?: { limit?: number }): readonly HostToolHit[];
}

/** Paths a tool may rely on. */
export interface WorkspacePaths {
  /** The workspace root (`--workspace`, default: the current directory), absolute. */
  readonly root: string;
  /**
   * False when the user has not trusted this workspace (`trellis trust DIR`): nothing under
   * `<root>/.trellis` may be run in process or applied (its skills, plugins and config). Absent means
   * trusted (an embedder that does not track trust). A skill source must treat skills found under
   * an untrusted workspace's `.trellis/skills` as untrusted: never in process, whatever their name.
   */
  readonly trusted?: boolean;
}

/** Everything a tool's `run` receives besides its input. */
export interface ToolContext<Settings = unknown> {
  /** Aborted at the deadline or when the caller gives up; long work must watch it. */
  readonly signal: AbortSignal;
  readonly logger: Logger;
  /** The plugin's settings: its defaults with `[runtime.tools.<key>]` merged over them. */
  readonly config: Settings;
  readonly workspace: WorkspacePaths;
  /** The environment the host was assembled with. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The call's id, for logs. */
  readonly callId: string;
  /** The fully qualified tool name, `<plugin-id>.<tool>`. */
  readonly tool: string;
  readonly host: HostServices;
  /**
   * Reports how far a long call has got (added later, so optional: call it as `ctx.progress?.(…)`).
   * The host forwards it to whoever waits, e.g. as MCP `notifications/progress`; values should grow.
   */
  readonly progress?: (update: ToolProgress) => void;
}

/** One progress report of a running call: `progress` out of `total` (when known), with an optional message. */
export interface ToolProgress {
  readonly progress: number;
  readonly total?: number;
  readonly message?: string;
}

/** What a tool's canonicalize hook returns: the input as it will really run, and a summary for policy and audit. */
export interface Canonicalized<Input> {
  readonly input: Input;
  /** A short, secret-free description of what will run, e.g. the resolved argv. */
  readonly summary?: Readonly<Record<string, unknown>>;
}

/** An example call, shown to models and in docs. */
export interface ToolExample {
  readonly description: string;
  readonly input: Readonly<Record<string, unknown>>;
}

/** A bundled tool, as written by its plugin. */
export interface ToolDefinition<Input = unknown, Output = unknown, Settings = unknown> {
  /** The tool's own name; the catalog prefixes it with the plugin id. */
  readonly name: string;
  /** Written for a model: what it does, when to use it, its limits. */
  readonly description: string;
  /** Input schema. It is turned into JSON Schema at build time; use no transforms. */
  readonly input: z.ZodType<Input>;
  readonly output?: z.ZodType<Output>;
  readonly contract?: Partial<ToolContract>;
  readonly tags?: readonly string[];
  readonly examples?: readonly ToolExample[];
  /** Resolves paths, normalizes argv and the like, so policy sees what will really run. Throw a `ToolError` to refuse. */
  canonicalize?(input: Input, ctx: ToolContext<Settings>): Canonicalized<Input> | Promise<Canonicalized<Input>>;
  run(input: Input, ctx: ToolContext<Settings>): Output | Promise<Output>;
}

/** Declares a tool; types its input from the zod schema. */
export function defineTool<Input, Output = unknown, Settings = unknown>(
  definition: ToolDefinition<Input, Output, Settings>,
): ToolDefinition<Input, Output, Settings> {
  return definition;
}

/** The contract with defaults filled in. Side-effecting tools are not idempotent unless they say so. */
export function resolveContract(contract: Partial<ToolContract> | undefined): ToolContract {
  const sideEffects = contract?.sideEffects ?? DEFAULT_TOOL_CONTRACT.sideEffects;
  return {
    ...DEFAULT_TOOL_CONTRACT,
    idempotent: !sideEffects,
    ...contract,
    sideEffects,
  };
}
