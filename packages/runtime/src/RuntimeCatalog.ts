import type { ToolContract } from '@trellis/sdk';

/**
 * The part of a catalog `ToolDescriptor` the runtime reads. `@trellis/catalog`'s descriptors
 * satisfy it structurally; the runtime never imports the catalog.
 */
export interface RuntimeToolDescriptor {
  /** Fully qualified name, `<plugin-id>.<tool>`. */
  readonly name: string;
  readonly plugin: string;
  /** The tool's own name (after `<plugin-id>.`). */
  readonly tool: string;
  readonly inputSchema: Readonly<Record<string, unknown>>;
  readonly outputSchema?: Readonly<Record<string, unknown>>;
  readonly contract: ToolContract;
  /**
   * Where the descriptor came from (a `ToolDescriptor`'s `source`). `bundled` means the build
   * checked its input schema against the meta-schema, so the runtime does not check it again.
   */
  readonly source?: 'bundled' | 'manifest' | 'discovered';
}

/** Why a known tool is not offered: a stable code and a message that says what to do. */
export interface RuntimeReason {
  readonly code: string;
  readonly message: string;
}

/** What a catalog lookup answers (the shape of `ResourceCatalog.lookup`). */
export type RuntimeToolLookup =
  | { readonly status: 'offered'; readonly descriptor: RuntimeToolDescriptor }
  | { readonly status: 'unavailable'; readonly descriptor?: RuntimeToolDescriptor; readonly reason: RuntimeReason }
  | { readonly status: 'not_found'; readonly nearest?: string };

/** The catalog as the runtime uses it. A `ResourceCatalog` satisfies it. */
export interface RuntimeCatalog {
  lookup(name: string): RuntimeToolLookup;
}
