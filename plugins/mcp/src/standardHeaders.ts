import type { FetchLike } from '@modelcontextprotocol/client';

/** The request param each method's `Mcp-Name` header mirrors (SEP-2243). */
const NAME_SOURCE: Readonly<Record<string, 'name' | 'uri'>> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
};

/**
 * A header value as SEP-2243 encodes it: as is when it is printable ASCII without leading or
 * trailing whitespace, else (and when it already looks encoded) `=?base64?<UTF-8 in base64>?=`.
 */
export function encodeHeaderValue(value: string): string {
  const plain = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/.test(value) && !/^=\?base64\?.*\?=$/.test(value);
  return plain ? value : `=?base64?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}

/**
 * The standard MCP request headers (SEP-2243) a POST with this JSON-RPC body carries:
 * `Mcp-Method` for every request and notification, and `Mcp-Name` for `tools/call`, `prompts/get`
 * (the name) and `resources/read` (the URI). Undefined for a body that is neither (a response, a
 * batch, not JSON).
 */
export function standardRequestHeaders(body: string): Record<string, string> | undefined {
  let message: unknown;
  try {
    message = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (message === null || typeof message !== 'object' || Array.isArray(message)) return undefined;
  const { method, params } = message as { method?: unknown; params?: unknown };
  if (typeof method !== 'string') return undefined;
  const headers: Record<string, string> = { 'mcp-method': method };
  const field = Object.hasOwn(NAME_SOURCE, method) ? NAME_SOURCE[method] : undefined;
  const value =
    field !== undefined && params !== null && typeof params === 'object' ? (params as Record<string, unknown>)[field] : undefined;
  if (typeof value === 'string') headers['mcp-name'] = encodeHeaderValue(value);
  return headers;
}

/**
 * A `fetch` for the SDK's StreamableHTTPClientTransport that adds the standard request headers
 * derived from each POST's body. The SDK client 2.4 sets them itself only on exchanges of the
 * 2026-07-28 era; a header it already set is kept as it is.
 */
export function withStandardHeaders(base: FetchLike = fetch): FetchLike {
  return (url, init) => {
    if (init?.method !== 'POST' || typeof init.body !== 'string') return base(url, init);
    const derived = standardRequestHeaders(init.body);
    if (derived === undefined) return base(url, init);
    const headers = new Headers(init.headers);
    for (const [name, value] of Object.entries(derived)) if (!headers.has(name)) headers.set(name, value);
    return base(url, { ...init, headers });
  };
}
