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

/** How a stdio connection ended. */
export type McpStdioEnd =
  /** The client closed stdin (the calls it had sent were answered, or the drain limit passed). */
  | 'stdin-closed'
  /** `close()` was called. */
  | 'closed'
  /**
   * The connection broke while stdin was open: a line longer than the transport takes, or stdout
   * failed (the client went away). Nothing more can be read or answered; `onerror` said why.
   */
  | 'broken';

/** A running stdio server. */
export interface McpStdioServing {
  /** Resolves, with how, once the connection is over: stdin closed and drained, `close()`, or broken. */
  readonly closed: Promise<McpStdioEnd>;
  close(): Promise<void>;
}

/** The SDK's stdio limit on one incoming line (its `ReadBuffer` default), named in errors. */
const MAX_LINE_BYTES = 10 * 1024 * 1024;

/**
 * Serves MCP over stdin/stdout through the SDK's `serveStdio` (2025-era `initialize` and 2026-07-28
 * `server/discover` openings alike). The end of stdin is the MCP stdio binding's signal to shut
 * down; the SDK's transport then cancels the requests still running and answers none of them. A
 * tool call that has already run (its side effects done) would then go unanswered, so the
 * transport reads stdin through a pipe that ends only once those calls have answered (bounded by
 * `drainTimeoutMs`); `closed` resolves then.
 *
 * The SDK's transport also closes itself when a line outgrows its buffer or stdout fails, and then
 * reads nothing more: `closed` resolves with `'broken'` so the caller ends instead of serving a
 * connection that can no longer hear. The SDK's own error texts for that and for a line that is
 * JSON but not JSON-RPC are put in words a user can act on before they reach `onerror`.
 */
export function serveMcpStdio(server: TrellisMcpServer, options: ServeMcpStdioOptions = {}): McpStdioServing {
  const stdin = options.stdin ?? process.stdin;
  const stdout = options.stdout ?? process.stdout;
  let markClosed!: (how: McpStdioEnd) => void;
  const closed = new Promise<McpStdioEnd>((resolve) => {
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
    markClosed('stdin-closed');
  };
  stdin.once('end', () => void drainThenEnd());
  stdin.once('close', () => void drainThenEnd());
  const onerror = options.onerror;
  let closing: Promise<void> | undefined;
  const handle = serveStdio(server.factory, {
    transport: new (class extends StdioServerTransport {
      override async close(): Promise<void> {
        await super.close();
        // After stdin's end or `close()`, `closed` gets its answer there.
        if (!ended && closing === undefined) markClosed('broken');
      }
    })(input, stdout),
    ...(onerror !== undefined ? { onerror: (error: Error) => onerror(toUserError(error)) } : {}),
  });
  return {
    closed,
    close() {
      closing ??= handle.close().finally(() => markClosed('closed'));
      return closing;
    },
  };
}

/** The SDK's stdio errors as what happened and what to do; anything else unchanged. */
function toUserError(error: Error): Error {
  if (/ReadBuffer exceeded maximum size/.test(error.message))
    return new Error(
      `a message from the client is longer than ${MAX_LINE_BYTES / 1024 / 1024} MiB, the most one stdio line may hold; ` +
        'the connection is closed. Pass large inputs by path (a file the tool reads) instead of inline.',
    );
  if (error.name === 'ZodError' || Array.isArray((error as { issues?: unknown }).issues))
    return new Error('ignored a line from the client that is JSON but not a JSON-RPC 2.0 request, notification or response');
  return error;
}
