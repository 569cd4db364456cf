import type { ToolDescriptor } from './ToolDescriptor.ts';
import { createModelNameTable } from './toModelToolName.ts';
import type { ModelNameTable } from './toModelToolName.ts';

/** A model API the catalog renders tools for. */
export type ToolRenderFormat = 'openai' | 'anthropic' | 'mcp';

/** An OpenAI Chat Completions / Responses function tool. */
export interface OpenAiTool {
  readonly type: 'function';
  readonly function: {
    readonly name: string;
    readonly description: string;
    readonly parameters: Readonly<Record<string, unknown>>;
  };
}

/** An Anthropic Messages API tool. */
export interface AnthropicTool {
  readonly name: string;
  readonly description: string;
  readonly input_schema: Readonly<Record<string, unknown>>;
}

/** An MCP `Tool` as listed by `tools/list`. */
export interface McpTool {
  /** The model-safe name (`^[a-zA-Z0-9_-]{1,64}$`), what `tools/call` must send back. */
  readonly name: string;
  /** The fully qualified Trellis name, for display. */
  readonly title: string;
  readonly description: string;
  readonly inputSchema: Readonly<Record<string, unknown>>;
  /** Only when the tool declares an object output schema (MCP requires `type: "object"`). */
  readonly outputSchema?: Readonly<Record<string, unknown>>;
  readonly annotations: {
    /** True when the contract says the tool has no side effects. */
    readonly readOnlyHint: boolean;
    readonly idempotentHint: boolean;
    /** True when the tool needs `net.outbound`. */
    readonly openWorldHint: boolean;
  };
}

/** A rendered tool of any format. */
export type RenderedTool = OpenAiTool | AnthropicTool | McpTool;

/** Options of `renderTools`. */
export interface RenderToolsOptions {
  /** Names to use; default: a fresh table over the given descriptors (see `createModelNameTable`). */
  readonly names?: ModelNameTable;
}

/**
 * Renders descriptors for a model API. Names are mapped to `^[a-zA-Z0-9_-]{1,64}$` for every
 * format, MCP included: the MCP spec allows dots, but widely used clients reject them, so the fully
 * qualified name goes into MCP's `title` instead. Schemas are passed through as given (not copied).
 */
export function renderTools(descriptors: readonly ToolDescriptor[], format: 'openai', options?: RenderToolsOptions): OpenAiTool[];
export function renderTools(descriptors: readonly ToolDescriptor[], format: 'anthropic', options?: RenderToolsOptions): AnthropicTool[];
export function renderTools(descriptors: readonly ToolDescriptor[], format: 'mcp', options?: RenderToolsOptions): McpTool[];
export function renderTools(descriptors: readonly ToolDescriptor[], format: ToolRenderFormat, options?: RenderToolsOptions): RenderedTool[];
export function renderTools(
  descriptors: readonly ToolDescriptor[],
  format: ToolRenderFormat,
  options: RenderToolsOptions = {},
): RenderedTool[] {
  const names = options.names ?? createModelNameTable(descriptors.map((descriptor) => descriptor.name));
  return descriptors.map((descriptor) => {
    const name = names.toModel(descriptor.name);
    if (name === undefined) throw new Error(`BUG: the name table has no entry for ${descriptor.name}`);
    return renderOne(descriptor, name, format);
  });
}

function renderOne(descriptor: ToolDescriptor, name: string, format: ToolRenderFormat): RenderedTool {
  switch (format) {
    case 'openai':
      return { type: 'function', function: { name, description: descriptor.description, parameters: descriptor.inputSchema } };
    case 'anthropic':
      return { name, description: descriptor.description, input_schema: descriptor.inputSchema };
    case 'mcp': {
      const { contract, outputSchema } = descriptor;
      return {
        name,
        title: descriptor.name,
        description: descriptor.description,
        inputSchema: descriptor.inputSchema,
        ...(outputSchema !== undefined && outputSchema.type === 'object' ? { outputSchema } : {}),
        annotations: {
          readOnlyHint: !contract.sideEffects,
          idempotentHint: contract.idempotent,
          openWorldHint: contract.capabilities.includes('net.outbound'),
        },
      };
    }
  }
}
