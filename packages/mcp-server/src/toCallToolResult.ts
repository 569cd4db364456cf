import type { CallToolResult, ContentBlock } from '@modelcontextprotocol/server';
import type { ToolOutcome } from '@trellis/sdk';

/** The `_meta` key that carries a failed call's Trellis error code and retryability. */
export const TRELLIS_ERROR_META_KEY = 'dev.trellis/error';

const CONTENT_TYPES = new Set(['text', 'image', 'audio', 'resource', 'resource_link']);

/**
 * A runtime outcome as an MCP `tools/call` result.
 *
 * - A failure is `isError: true` with one text block `CODE: message` and the code in `_meta`.
 * - A string value is one text block.
 * - A value that is exactly `{ content: [...] }` of valid MCP content blocks (text, image, audio,
 *   embedded resource, resource link) is sent as those blocks: how a tool returns an image.
 * - Any other value is `structuredContent` plus a text block with its JSON (for clients that read
 *   only `content`).
 */
export function toCallToolResult(outcome: ToolOutcome): CallToolResult {
  if (!outcome.ok) {
    const { code, message, retryable } = outcome.error;
    return {
      isError: true,
      content: [{ type: 'text', text: `${code}: ${message}` }],
      _meta: { [TRELLIS_ERROR_META_KEY]: { code, retryable } },
    };
  }
  const value = outcome.value;
  if (typeof value === 'string') return { content: [{ type: 'text', text: value }] };
  const blocks = contentBlocksOf(value);
  if (blocks !== undefined) return { content: blocks };
  if (value === undefined || value === null) return { content: [{ type: 'text', text: 'null' }] };
  return {
    content: [{ type: 'text', text: JSON.stringify(value) }],
    structuredContent: value as CallToolResult['structuredContent'],
  };
}

/** The blocks of a `{ content: [...] }` value, or undefined when the value is anything else. */
function contentBlocksOf(value: unknown): ContentBlock[] | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const keys = Object.keys(value);
  if (keys.length !== 1 || keys[0] !== 'content') return undefined;
  const content = (value as { content: unknown }).content;
  if (!Array.isArray(content) || content.length === 0) return undefined;
  for (const block of content) if (!isContentBlock(block)) return undefined;
  return content as ContentBlock[];
}

function isContentBlock(block: unknown): boolean {
  if (typeof block !== 'object' || block === null) return false;
  const b = block as Record<string, unknown>;
  if (typeof b.type !== 'string' || !CONTENT_TYPES.has(b.type)) return false;
  switch (b.type) {
    case 'text':
      return typeof b.text === 'string';
    case 'image':
    case 'audio':
      return typeof b.data === 'string' && typeof b.mimeType === 'string';
    case 'resource': {
      const r = b.resource as Record<string, unknown> | null | undefined;
      return typeof r === 'object' && r !== null && typeof r.uri === 'string' && (typeof r.text === 'string' || typeof r.blob === 'string');
    }
    default:
      return typeof b.uri === 'string' && typeof b.name === 'string';
  }
}
