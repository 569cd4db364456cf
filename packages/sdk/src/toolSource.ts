import type { PluginContext } from './definePlugin.ts';
import type { ToolContext, ToolContract, ToolExample } from './defineTool.ts';
import type { LifecycleTransition, PartLifecycleReport } from './lifecycle.ts';

/** Why a known tool is not offered now: a stable code and a message that says what to do. */
export interface ToolSourceReason {
  readonly code: string;
  readonly message: string;
}

/**
 * One tool a dynamic source knows, as JSON: what the catalog turns into a descriptor. The source's
 * word, so the catalog treats it like a process plugin's `get_tools` reply (schemas checked, the
 * manifest's side effects and capabilities win).
 */
export interface DynamicToolSpec {
  /** The tool's own name (after `<plugin-id>.`); dots allowed, e.g. `github.create_issue`. */
  readonly name: string;
  readonly description: string;
  readonly inputSchema: Readonly<Record<string, unknown>>;
  readonly outputSchema?: Readonly<Record<string, unknown>>;
  readonly tags?: readonly string[];
  readonly examples?: readonly ToolExample[];
  readonly contract?: Partial<ToolContract>;
  /** Hints as the source reported them (e.g. MCP `readOnlyHint`, `title`): informative, never trusted. */
  readonly annotations?: Readonly<Record<string, unknown>>;
  /** Set when the tool is known but withheld (its server is down, its pin changed): listed, not offered. */
  readonly unavailable?: ToolSourceReason;
}

/** How much `start` should do. */
export interface ToolSourceStartOptions {
  readonly signal?: AbortSignal;
  /**
   * `cached` (default): learn only what is not known yet (e.g. servers never seen), answer the
   * rest from the source's cache. `refresh`: contact everything now (long-running hosts, `doctor`).
   */
  readonly mode?: 'cached' | 'refresh';
}

/**
 * Tools that a bundled plugin learns at run time (an MCP server's `tools/list`), the in-process
 * equivalent of a process plugin's `get_tools`. The host asks `list()` after `start()` and again
 * after every `onChanged` signal, and routes calls of listed tools to `call()`.
 */
export interface ToolSource {
  /** Learns the tools; resolves when the list is as good as it will get, never rejects. */
  start(options?: ToolSourceStartOptions): Promise<void>;
  /** The tools known now, offered or withheld; cheap and synchronous. */
  list(): readonly DynamicToolSpec[];
  /**
   * Runs one call. Throw a `ToolError` for expected failures (they become the call's outcome);
   * watch `ctx.signal`, which aborts at the deadline or when the caller gives up.
   */
  call(tool: string, input: unknown, ctx: ToolContext): Promise<unknown>;
  /** Subscribes to changes of `list()`; returns the unsubscribe function. */
  onChanged(listener: () => void): () => void;
  /** Problems of the source's parts (a server that failed), for `plugins explain` and `doctor`. */
  problems?(): readonly ToolSourceReason[];
  /** Optional: the lifecycle of each part (each bridged server), for `trellis status` and `Assembly.status()`. */
  health?(): readonly PartLifecycleReport[];
  /** Optional: calls `listener` on every part's lifecycle transition; returns the unsubscribe function. */
  onLifecycleChange?(listener: (transition: LifecycleTransition) => void): () => void;
  /** Stops everything the source started; resolves when nothing is left running. */
  close(): Promise<void>;
}

/** Makes a plugin's tool source; called once, after `setup`. */
export type ToolSourceFactory<Settings = unknown> = (ctx: PluginContext<Settings>) => ToolSource;
