import type { PluginManifest, ToolSpec } from '@trellis/sdk';

/** Why something is as it is: a stable code from `ERROR_CODES` and a message that says what to do. */
export interface CatalogReason {
  readonly code: string;
  readonly message: string;
}

/**
 * One plugin as the catalog reads it from a snapshot. A registry `SnapshotEntry` satisfies this
 * structurally; the catalog never imports the registry.
 */
export interface CatalogPluginView {
  readonly id: string;
  /** `enabled` | `disabled` | `unavailable` | `rejected` | `shadowed`. */
  readonly state: string;
  readonly manifest: PluginManifest | null;
  readonly bundled: boolean;
  /** Why this state; the first one is the headline. */
  readonly reasons: readonly CatalogReason[];
}

/** The part of a `PluginRegistrySnapshot` the catalog reads. */
export interface CatalogSnapshotView {
  readonly plugins: readonly CatalogPluginView[];
}

/** The part of a `BundledPluginDescriptor` the catalog reads: the plugin id and its build-time tool specs. */
export interface CatalogBundledView {
  readonly manifest: { readonly id: string };
  readonly tools: readonly ToolSpec[];
}

/** The part of a `RuntimeConfig` the catalog reads. */
export interface CatalogConfigView {
  readonly runtime: {
    /** Upper bound on every tool's deadline, in seconds. */
    readonly tool_timeout_seconds: number;
    /** Extra attempts for retryable failures when a tool states none. */
    readonly max_retries: number;
    /** Granted capabilities; `*` grants every standard capability (`CAPABILITIES`). */
    readonly capabilities: readonly string[];
    /** Globs on fully qualified tool names. */
    readonly policy: {
      readonly allow: readonly string[];
      readonly deny: readonly string[];
      readonly ask: readonly string[];
    };
  };
}
