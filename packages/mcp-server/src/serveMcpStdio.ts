import { PassThrough, type Readable, type Writable } from 'node:stream';
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
  /**
   * Once stdin ends, how long the calls already received may still run to their answers before
   * the transport closes (and cancels what is left); default 10 000 ms.
   */
  readonly drainTimeoutMs?: number;
}

/** A running stdio server. */
export interface McpStdioServing {
  /**
   * Resolves when the client closed stdin and the calls it had sent were answered (or the drain
   * limit passed), or when `close` was called.
   */
  readonly closed: Promise<void>;
  close(): Promise<void>;
}

/**
 * Serves MCP over stdin/stdout through the SDK's `serveStdio` (2025-era `initialize` and 2026-07-28
 * `server/discover` openings alike). The end of stdin is the MCP stdio binding's signal to shut
 * down; the SDK's transport then cancels the requests still running and answers none of them. A
 * tool call that has already run (its side effects done) would then go unanswered, so the
 * transport reads stdin through a pipe that ends only once those calls have answered (bounded by
 * `drainTimeoutMs`); `closed` resolves then.
 */
export function serveMcpStdio(server: TrellisMcpServer, options: ServeMcpStdioOptions = {}): McpStdioServing {
  const stdin = options.stdin ?? process.stdin;
  const stdout = options.stdout ?? process.stdout;
  let markClosed!: () => void;
  const closed = new Promise<void>((resolve) => {
    markClosed = resolve;
  });
  const input = new PassThrough();
  stdin.pipe(input, { end: false });
  let ended = false;
  const drainThenEnd = async (): Promise<void> => {
    if (ended) return;
    ended = true;
    // Lines read just before the end are dispatched first (one turn), then their calls answer.
    await new Promise<void>((resolve) => setImmediate(resolve));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([server.idle(), new Promise<void>((resolve) => (timer = setTimeout(resolve, options.drainTimeoutMs ?? 10_000)))]);
    clearTimeout(timer);
    // The last answer is written once its handler has settled: one more turn.
    await new Promise<void>((resolve) => setImmediate(resolve));
    input.end();
    markClosed();
  };
  stdin.once('end', () => void drainThenEnd());
  stdin.once('close', () => void drainThenEnd());
  const handle = serveStdio(server.factory, {
    transport: new StdioServerTransport(input, stdout),
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
