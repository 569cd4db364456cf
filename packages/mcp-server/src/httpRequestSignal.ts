import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The signal of the HTTP request being served, for the tool calls it carries: aborted when the
 * client's connection closes or `reauthorize()` ends the request. The SDK's own request signal
 * misses a client that leaves once an SSE keep-alive has been written (about 15 s into a call),
 * so `serveMcpHttp` sets this around each request and `tools/call` listens to both.
 */
export const httpRequestSignal = new AsyncLocalStorage<AbortSignal>();
