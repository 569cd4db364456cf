import type { Readable, Writable } from 'node:stream';
import { serveStdio, StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import type { TrellisMcpServer } from './createTrellisMcpServer.ts';

/** Options of {@link serveMcpStdio}. */
export interface ServeMcpStdioOptions {
  /** Default `process.stdin`. */
  readonly stdin?: Readable;
  /** Default `process.stdout`: nothing else may write there while serving. */
  readonly stdout?: Writable;
  /** Out-of-band protocol errors (a malformed line and the like); they never reach stdout. */
  readonly onerror?: (error: Error) => void;
}

/** A running stdio server. */
export interface McpStdioServing {
  /** Resolves when the client closed stdin (or `close` was called). */
  readonly closed: Promise<void>;
  close(): Promise<void>;
}

/**
 * Serves MCP over stdin/stdout through the SDK's `serveStdio` (2025-era `initialize` and 2026-07-28
 * `server/discover` openings alike). `closed` resolves when stdin ends, the MCP stdio binding's
 * signal to shut down.
 */
export function serveMcpStdio(server: TrellisMcpServer, options: ServeMcpStdioOptions = {}): McpStdioServing {
  const stdin = options.stdin ?? process.stdin;
  const stdout = options.stdout ?? process.stdout;
  let markClosed!: () => void;
  const closed = new Promise<void>((resolve) => {
    markClosed = resolve;
  });
  stdin.once('end', () => markClosed());
  stdin.once('close', () => markClosed());
  const handle = serveStdio(server.factory, {
    transport: new StdioServerTransport(stdin, stdout),
    ...(options.onerror !== undefined ? { onerror: options.onerror } : {}),
  });
  let closing: Promise<void> | undefined;
  return {
    closed,
    close() {
      closing ??= handle.close().finally(markClosed);
      return closing;
    },
  };
}
