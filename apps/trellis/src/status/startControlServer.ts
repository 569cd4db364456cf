import { chmodSync, lstatSync, unlinkSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { ERROR_CODES } from '@trellis/sdk';
import { ensureControlDir } from './controlDir.ts';
import type { HostStatus } from './HostStatus.ts';

/** Longest request line a control socket reads (a status request is a few dozen bytes). */
export const MAX_CONTROL_REQUEST_BYTES = 64 * 1024;
/** A client that sends no complete request within this time of connecting (or of its last byte) is disconnected. */
const REQUEST_IDLE_MS = 5_000;
/** Linux `sun_path` holds 108 bytes, the terminating NUL included. */
const MAX_SOCKET_PATH_BYTES = 107;

/** Options of {@link startControlServer}. */
export interface ControlServerOptions {
  /** The control folder (see `resolveControlDir`). */
  readonly dir: string;
  /** Answers a status request; called per request, so it always reports the host as it is now. */
  readonly status: () => HostStatus;
  /** Where problems go (the socket is a convenience: a host runs on without it). */
  readonly warn: (message: string) => void;
}

/** A running control server. */
export interface ControlServer {
  /** The socket's path: `<dir>/<pid>.sock`. */
  readonly path: string;
  /** Stops listening and removes the socket; idempotent. */
  close(): Promise<void>;
}

function reply(socket: Socket, value: unknown): void {
  socket.end(`${JSON.stringify(value)}\n`);
  // Closed once the answer is flushed, even if the client keeps its side open and keeps sending.
  socket.destroySoon();
}

function refuse(socket: Socket, message: string): void {
  reply(socket, { ok: false, error: { code: ERROR_CODES.CONTROL_REQUEST_INVALID, message } });
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // already gone
  }
}

/**
 * Opens the host's control socket `<dir>/<pid>.sock` (folder 700, socket 600): one JSON line in
 * (`{"type":"status"}`), one JSON line out (`{"ok":true,"status":{…}}`, or `{"ok":false,"error":
 * {code,message}}` for a malformed, unknown or oversized request). The socket is removed by
 * `close()` and, for every other way out of the process, by an `exit` hook. Resolves undefined
 * (after a warning) when the socket cannot be opened: the host serves on without it.
 */
export async function startControlServer(options: ControlServerOptions): Promise<ControlServer | undefined> {
  const { dir, warn } = options;
  const problem = ensureControlDir(dir);
  if (problem !== undefined) {
    warn(`no control socket (trellis status will not see this host): ${problem}`);
    return undefined;
  }
  const path = join(dir, `${process.pid}.sock`);
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH_BYTES) {
    warn(
      `no control socket (trellis status will not see this host): ${path} is longer than a Unix socket path may be; set XDG_RUNTIME_DIR to a shorter folder`,
    );
    return undefined;
  }
  // A socket named after our pid belongs to a dead process that had this pid before.
  try {
    if (lstatSync(path).isSocket()) unlinkSync(path);
  } catch {
    // none there
  }

  const server = createServer((socket) => {
    let buffered = '';
    let bytes = 0;
    socket.setEncoding('utf8');
    socket.setTimeout(REQUEST_IDLE_MS, () => socket.destroy());
    // The idle timeout never fires for a client that trickles a byte a second: the whole request
    // must arrive within the same time of connecting, or the client is refused and let go.
    const deadline = setTimeout(() => {
      if (socket.writableEnded) socket.destroy();
      else refuse(socket, `no complete request within ${REQUEST_IDLE_MS / 1000} s of connecting; send one line: {"type":"status"}`);
    }, REQUEST_IDLE_MS);
    deadline.unref();
    socket.on('close', () => clearTimeout(deadline));
    socket.on('error', () => {
      // a client that went away: nothing to do
    });
    socket.on('data', (chunk: string) => {
      if (socket.writableEnded) return;
      bytes += Buffer.byteLength(chunk);
      // Only the new bytes can hold the first newline: no rescan of what came before.
      const inChunk = chunk.indexOf('\n');
      buffered += chunk;
      if (inChunk < 0) {
        if (bytes > MAX_CONTROL_REQUEST_BYTES) refuse(socket, `the request is larger than ${MAX_CONTROL_REQUEST_BYTES} bytes`);
        return;
      }
      const newline = buffered.length - chunk.length + inChunk;
      if (newline > MAX_CONTROL_REQUEST_BYTES) return refuse(socket, `the request is larger than ${MAX_CONTROL_REQUEST_BYTES} bytes`);
      clearTimeout(deadline);
      answer(socket, buffered.slice(0, newline));
    });
  });

  function answer(socket: Socket, line: string): void {
    let request: unknown;
    try {
      request = JSON.parse(line);
    } catch {
      return refuse(socket, 'the request is not JSON; send one line: {"type":"status"}');
    }
    const type = typeof request === 'object' && request !== null ? (request as { type?: unknown }).type : undefined;
    if (type !== 'status') return refuse(socket, `unknown request type ${JSON.stringify(type ?? null)}; the only one is "status"`);
    try {
      reply(socket, { ok: true, status: options.status() });
    } catch (error) {
      reply(socket, {
        ok: false,
        error: {
          code: ERROR_CODES.INTERNAL_ERROR,
          message: `the host could not describe itself (${error instanceof Error ? error.message : String(error)}); this is a bug in Trellis, please report it`,
        },
      });
    }
  }

  const listening = await new Promise<boolean>((resolve) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      warn(`no control socket (trellis status will not see this host): cannot listen on ${path} (${error.code ?? error.message})`);
      resolve(false);
    });
    server.listen(path, () => resolve(true));
  });
  if (!listening) return undefined;
  server.on('error', (error) => warn(`control socket ${path}: ${error.message}`));
  // The folder (700) is the access control; the socket's own mode narrows it further.
  chmodSync(path, 0o600);
  server.unref();

  const onExit = () => unlinkQuietly(path);
  process.on('exit', onExit);
  let closed: Promise<void> | undefined;
  return {
    path,
    close() {
      closed ??= new Promise<void>((resolve) => {
        process.off('exit', onExit);
        unlinkQuietly(path);
        server.close(() => resolve());
      });
      return closed;
    },
  };
}
