import type { ChildProcess } from 'node:child_process';
import { ReadBuffer, serializeMessage, type JSONRPCMessage, type Transport } from '@modelcontextprotocol/client';
import { killGroup, launchChild, prepareChildLauncher } from '@trellis/sdk/internal';

/** Options of {@link GroupStdioTransport}. */
export interface GroupStdioTransportOptions {
  readonly command: string;
  readonly args: readonly string[];
  /** The child's whole environment (the caller builds it; nothing is inherited). */
  readonly env: Readonly<Record<string, string>>;
  readonly cwd: string;
  /** Each line the server writes to stderr (its log). */
  readonly onStderr?: (line: string) => void;
  /** How long `close` waits after closing stdin, then after SIGTERM, before SIGKILL. Default 2000 ms each. */
  readonly graceMs?: number;
}

// Every live process group, so an exit path that skips `close` (process.exit, an uncaught error)
// still kills them: the 'exit' listener runs synchronously on every exit of the host.
const MAX_STDERR_LINE = 4096;

/**
 * The MCP client's stdio transport, with the server in a process group of its own: the SDK's
 * `StdioClientTransport` cannot start one, and without it a server's own children (an `npx`
 * wrapper's node, a shell's subprocesses) outlive the host. `close` ends stdin, then sends SIGTERM
 * and SIGKILL to the whole group; a server that dies by itself has its group killed too, and the
 * host's exit kills every group left.
 */
export class GroupStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private child: ChildProcess | undefined;
  private readonly readBuffer = new ReadBuffer();
  private exited: Promise<void> | undefined;
  private closed = false;

  constructor(private readonly options: GroupStdioTransportOptions) {}

  /** The server's pid (also its process group id) once started. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  async start(): Promise<void> {
    if (this.child !== undefined) throw new Error('GroupStdioTransport already started');
    // The one launcher: own process group (tracked for the host's exit), and a private /proc where
    // the machine allows, so the server cannot read the host's secrets.
    await prepareChildLauncher();
    const o = this.options;
    return new Promise<void>((resolve, reject) => {
      let child: ChildProcess;
      try {
        child = launchChild({ command: o.command, args: [...o.args], cwd: o.cwd, env: { ...o.env } }).child;
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
        return;
      }
      this.child = child;
      let spawned = false;
      this.exited = new Promise<void>((done) => child.once('exit', () => done()));
      child.once('spawn', () => {
        spawned = true;
        resolve();
      });
      child.once('error', (error) => {
        if (!spawned) reject(error);
        else this.onerror?.(error);
      });
      child.once('exit', () => {
        // The leader is gone; anything it left in its group goes too.
        if (child.pid !== undefined) killGroup(child.pid, 'SIGKILL');
        if (!this.closed) {
          this.closed = true;
          this.onclose?.();
        }
      });
      child.stdin?.on('error', (error) => this.onerror?.(error));
      child.stdout?.on('data', (chunk: Buffer) => {
        this.readBuffer.append(chunk);
        for (;;) {
          let message: JSONRPCMessage | null;
          try {
            message = this.readBuffer.readMessage();
          } catch (error) {
            this.onerror?.(error instanceof Error ? error : new Error(String(error)));
            continue;
          }
          if (message === null) break;
          this.onmessage?.(message);
        }
      });
      let pending = '';
      child.stderr?.setEncoding('utf8').on('data', (text: string) => {
        pending += text;
        let newline = pending.indexOf('\n');
        while (newline >= 0) {
          o.onStderr?.(pending.slice(0, newline).slice(0, MAX_STDERR_LINE));
          pending = pending.slice(newline + 1);
          newline = pending.indexOf('\n');
        }
        if (pending.length > MAX_STDERR_LINE) {
          o.onStderr?.(pending.slice(0, MAX_STDERR_LINE));
          pending = '';
        }
      });
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (stdin === undefined || stdin === null || this.closed) return Promise.reject(new Error('the server process is not running'));
    return new Promise<void>((resolve) => {
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once('drain', resolve);
    });
  }

  /** Ends the server: stdin closed, then SIGTERM, then SIGKILL to its group; resolves when the leader has exited. */
  async close(): Promise<void> {
    const child = this.child;
    const wasClosed = this.closed;
    this.closed = true;
    if (child === undefined || child.pid === undefined) {
      if (!wasClosed) this.onclose?.();
      return;
    }
    const pgid = child.pid;
    const grace = this.options.graceMs ?? 2000;
    const exited = this.exited ?? Promise.resolve();
    const running = (): boolean => child.exitCode === null && child.signalCode === null;
    const wait = (ms: number): Promise<void> => Promise.race([exited, new Promise<void>((resolve) => setTimeout(resolve, ms).unref())]);
    try {
      child.stdin?.end();
    } catch {
      // already closed
    }
    if (running()) await wait(grace);
    if (running()) {
      killGroup(pgid, 'SIGTERM');
      await wait(grace);
    }
    killGroup(pgid, 'SIGKILL');
    if (running()) await exited;
    child.stdout?.destroy();
    child.stderr?.destroy();
    this.readBuffer.clear();
    if (!wasClosed) this.onclose?.();
  }
}
