import { hashJson } from '@trellis/sdk/internal';
import type { ToolContract, ToolExample } from '@trellis/sdk';

/** Where a descriptor came from: a bundled tool spec, a manifest `[[tools]]` entry, or a running plugin's report. */
export type ToolSource = 'bundled' | 'manifest' | 'discovered';

/** Everything a host needs to offer and call one tool, without its implementation. */
export interface ToolDescriptor {
  /** Fully qualified: `<plugin-id>.<tool>`. */
  readonly name: string;
  readonly plugin: string;
  /** The tool's own name (after `<plugin-id>.`). */
  readonly tool: string;
  readonly description: string;
  readonly tags: readonly string[];
  readonly examples: readonly ToolExample[];
  /** JSON Schema of the input, as data (never compiled here). */
  readonly inputSchema: Readonly<Record<string, unknown>>;
  readonly outputSchema?: Readonly<Record<string, unknown>>;
  /** The effective contract; `deadlineMs` is already capped by `[runtime] tool_timeout_seconds`. */
  readonly contract: ToolContract;
  readonly source: ToolSource;
  /**
   * Hints a running plugin reported with the tool (an MCP server's `annotations` and `title`), as
   * it reported them: informative for renderings, never trusted for policy. Absent for most tools.
   */
  readonly annotations?: Readonly<Record<string, unknown>>;
  /** sha256 (hex) of the canonical JSON (sorted keys) of `inputSchema`; computed on first read, then cached. */
  readonly schemaHash: string;
}

/** The fields of a descriptor before its lazy hash. */
export type ToolDescriptorFields = Omit<ToolDescriptor, 'schemaHash'>;

// A class so `schemaHash` is a lazy getter on the prototype: own fields stay plain data.
class Descriptor implements ToolDescriptor {
  declare readonly name: string;
  declare readonly plugin: string;
  declare readonly tool: string;
  declare readonly description: string;
  declare readonly tags: readonly string[];
  declare readonly examples: readonly ToolExample[];
  declare readonly inputSchema: Readonly<Record<string, unknown>>;
  declare readonly outputSchema?: Readonly<Record<string, unknown>>;
  declare readonly contract: ToolContract;
  declare readonly source: ToolSource;
  declare readonly annotations?: Readonly<Record<string, unknown>>;
  #schemaHash: string | undefined;

  constructor(fields: ToolDescriptorFields) {
    // Assigned one by one in a fixed order: one hidden class for every descriptor, name first when printed.
    this.name = fields.name;
    this.plugin = fields.plugin;
    this.tool = fields.tool;
    this.description = fields.description;
    this.tags = fields.tags;
    this.examples = fields.examples;
    this.inputSchema = fields.inputSchema;
    if (fields.outputSchema !== undefined) this.outputSchema = fields.outputSchema;
    this.contract = fields.contract;
    this.source = fields.source;
    if (fields.annotations !== undefined) this.annotations = fields.annotations;
    Object.freeze(this);
  }

  get schemaHash(): string {
    this.#schemaHash ??= hashJson(this.inputSchema);
    return this.#schemaHash;
  }

  toJSON(): ToolDescriptor {
    return { ...this, schemaHash: this.schemaHash };
  }
}

/** Makes a frozen descriptor (shallowly: schemas and contract are shared, readonly by type) whose `schemaHash` is computed on first read. */
export function createToolDescriptor(fields: ToolDescriptorFields): ToolDescriptor {
  return new Descriptor(fields);
}

// The canonical form and its hash live in @trellis/sdk (the registry and runtime hash with them too).
export { canonicalJson, hashJson } from '@trellis/sdk/internal';
