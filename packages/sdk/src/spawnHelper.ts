import { EventEmitter } from 'node:events';
import type { ChildProcess, spawn as SpawnFunction } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { killGroup } from './processGroups.ts';

/**
 * A child Trellis started, spawned by this process or by the spawn helper: the part of a
 * `ChildProcess` the host uses. `'close'` follows `'exit'` once stdout and stderr are closed.
 */
export interface StartedChild {
  readonly pid?: number | undefined;
  /**
   * Set before `'exit'` when the child did not end of itself: the spawn helper that started it was
   * lost, and the child was killed with it. Trellis's doing, not the child's: not a crash.
   */
  readonly lostWithHelper?: string;
  readonly stdin: Writable;
  readonly stdout: Readable;
  readonly stderr: Readable;
  kill(signal?: NodeJS.Signals): boolean;
  on(event: 'exit', listener: (code: number | null, signal: NodeJS.Signals | null) => void): unknown;
  on(event: 'close', listener: () => void): unknown;
  on(event: 'error', listener: (error: NodeJS.ErrnoException) => void): unknown;
  once(event: 'exit', listener: (code: number | null, signal: NodeJS.Signals | null) => void): unknown;
  once(event: 'close', listener: () => void): unknown;
  once(event: 'error', listener: (error: NodeJS.ErrnoException) => void): unknown;
}

/**
 * The helper's program, run as `node -e`. It spawns what it is asked to (always detached: the child
 * leads its own process group), one spawn per turn of its event loop so that it keeps answering
 * the host in a burst, and sends the child's pid, its three stdio sockets and, later, its exit
 * status back over the IPC channel. The host then talks to the child directly: no byte of a call
 * passes through here. It signals its own children on request (it alone knows whether one has been
 * reaped, so a signal never reaches a process that took over a reaped child's pid), answers pings,
 * and when the host goes away (the channel closes) it kills every group it started and exits.
 *
 * Node's stdio sockets start reading as soon as they are made, and a handle waits here until the
 * host acknowledges the one before it; output read here meanwhile would be lost. So stdout and
 * stderr stop reading in the tick they are made (before the event loop could poll them), and are
 * marked unreadable so that nothing (Node's flush at the child's exit) starts them again; and
 * stdin is taken out of the ChildProcess, which would otherwise close it when the child exits
 * before its handle has left.
 */
const HELPER_PROGRAM = `'use strict';
const { spawn } = require('node:child_process');
const running = new Map();
const queue = [];
let draining = false;
const send = (message, handle) => { if (process.connected) process.send(message, handle); };
function start(m) {
  let child;
  try {
    child = spawn(m.command, m.args, { cwd: m.cwd, env: m.env, detached: true, stdio: 'pipe' });
  } catch (error) {
    send({ type: 'failed', id: m.id, code: error.code, message: String(error.message) });
    return;
  }
  if (child.pid === undefined) {
    child.once('error', (error) => send({ type: 'failed', id: m.id, code: error.code, message: String(error.message) }));
    return;
  }
  for (const stream of [child.stdout, child.stderr]) {
    stream._handle.reading = false;
    stream._handle.readStop();
    stream.readable = false;
  }
  const stdin = child.stdin;
  child.stdin = null;
  running.set(m.id, child);
  child.on('error', () => {});
  child.once('exit', (code, signal) => {
    running.delete(m.id);
    send({ type: 'exit', id: m.id, code, signal });
  });
  send({ type: 'spawned', id: m.id, pid: child.pid });
  send({ type: 'stdio', id: m.id, fd: 0 }, stdin);
  send({ type: 'stdio', id: m.id, fd: 1 }, child.stdout);
  send({ type: 'stdio', id: m.id, fd: 2 }, child.stderr);
}
function drain() {
  const next = queue.shift();
  if (next !== undefined) start(next);
  if (queue.length > 0) setImmediate(drain);
  else draining = false;
}
process.on('message', (m) => {
  if (m === null || typeof m !== 'object') return;
  if (m.type === 'ping') send({ type: 'pong' });
  else if (m.type === 'kill') running.get(m.id)?.kill(m.signal);
  else if (m.type === 'spawn') {
    queue.push(m);
    if (!draining) {
      draining = true;
      setImmediate(drain);
    }
  }
});
process.on('disconnect', () => {
  for (const child of running.values()) {
    try { process.kill(-child.pid, 'SIGKILL'); } catch {}
  }
  process.exit(0);
});
send({ type: 'ready' });
`;

/** The helper's last argument, so that `ps` (and a test) can tell it apart. */
export const SPAWN_HELPER_NAME = 'trellis-spawn-helper';

/** How the host watches the helper while it owes answers or runs children. */
export interface SpawnHelperTiming {
  /** Ping a helper not heard from for this long. Default 1 s. */
  readonly pingMs?: number;
  /** Give up on a helper that has not answered a ping (or become ready) for this long. Default 10 s. */
  readonly silenceLimitMs?: number;
}

/** The helper cannot take this spawn, and never saw it: spawn here instead. */
export class SpawnHelperUnavailable extends Error {}

/**
 * The helper was lost after this spawn request left: the child may have been started (and is
 * killed with the helper's), so the request must not be repeated as if it never ran.
 */
export class SpawnHelperLost extends Error {
  readonly code = 'SPAWN_HELPER_LOST';
}

type HelperMessage =
  | { type: 'ready' }
  | { type: 'pong' }
  | { type: 'spawned'; id: number; pid: number }
  | { type: 'stdio'; id: number; fd: 0 | 1 | 2 }
  | { type: 'failed'; id: number; code?: string; message: string }
  | { type: 'exit'; id: number; code: number | null; signal: NodeJS.Signals | null };

type Socket = Readable & Writable;

/** A child the helper started; the host holds its stdio sockets, the helper its exit status. */
class HelperChild extends EventEmitter implements StartedChild {
  lostWithHelper?: string;
  stdin!: Writable;
  stdout!: Readable;
  stderr!: Readable;
  #exited = false;
  #status: [number | null, NodeJS.Signals | null] = [null, null];
  #open = 2;
  #closed = false;

  constructor(
    readonly pid: number,
    private readonly signal: (signal: NodeJS.Signals) => void,
  ) {
    super();
  }

  /** Takes one of the child's stdio sockets; true once all three are here. */
  attach(fd: 0 | 1 | 2, socket: Socket): boolean {
    if (fd === 0) {
      // The host only writes to fd 0, yet Node made the socket readable and started reading it. A
      // read fails with ECONNRESET when the child exits with input unread, an error a direct
      // child's write-only stdin never has: stop reading, as net's own pause does.
      const handle = (socket as unknown as { _handle?: { reading?: boolean; readStop?: () => number } })._handle;
      if (handle?.readStop !== undefined) {
        handle.reading = false;
        handle.readStop();
      }
      this.stdin = socket;
    } else {
      if (fd === 1) this.stdout = socket;
      else this.stderr = socket;
      socket.once('close', () => {
        this.#open -= 1;
        this.#maybeClose();
      });
    }
    return this.stdin !== undefined && this.stdout !== undefined && this.stderr !== undefined;
  }

  /** Asks the helper to signal the child (a no-op there once it has exited); false once it has. */
  kill(signal: NodeJS.Signals = 'SIGTERM'): boolean {
    if (this.#exited) return false;
    this.signal(signal);
    return true;
  }

  exited(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.#exited) return;
    this.#exited = true;
    this.#status = [code, signal];
    this.stdin?.destroy();
    this.emit('exit', code, signal);
    // As Node does for a ChildProcess: output nobody reads is let flow, so that the streams end
    // and 'close' follows.
    for (const stream of [this.stdout, this.stderr]) if (stream?.listenerCount('data') === 0 && !stream.destroyed) stream.resume();
    this.#maybeClose();
  }

  #maybeClose(): void {
    if (!this.#exited || this.#open > 0 || this.#closed) return;
    this.#closed = true;
    this.emit('close', ...this.#status);
  }
}

interface Pending {
  readonly resolve: (child: HelperChild) => void;
  readonly reject: (error: Error) => void;
  child?: HelperChild;
}

/**
 * A small long-lived process that starts the host's children. Node starts a child by forking the
 * whole process, which holds the host's event loop for a time that grows with its memory (5–10 ms
 * for a host serving a thousand plugins on a 2-core machine); the helper is a bare Node process, so
 * its fork is cheap and, above all, off the host's thread. Until it is ready, and for good once it
 * has failed, children are spawned by the host itself (`startChild` falls back).
 */
export class SpawnHelper {
  readonly #proc: ChildProcess;
  readonly #pending = new Map<number, Pending>();
  readonly #children = new Map<number, HelperChild>();
  #next = 1;
  #ready = false;
  #gone = false;
  #retiring = false;
  #startedAt = performance.now();
  #lastHeard = performance.now();
  #pingSentAt: number | undefined;
  #watchdog: NodeJS.Timeout | undefined;
  readonly #pingMs: number;
  readonly #silenceLimitMs: number;
  /** Resolves when the helper is ready (true) or could not start (false). */
  readonly ready: Promise<boolean>;
  #settleReady!: (ready: boolean) => void;

  /**
   * `prefix`: a command line the helper runs behind (`setpriv --pdeathsig KILL --`, so that it dies
   * with a host killed outright). `onGone`: told once why the helper is no longer used.
   */
  constructor(
    spawn: typeof SpawnFunction,
    prefix: readonly string[],
    private readonly onGone: (reason: string) => void = () => {},
    timing: SpawnHelperTiming = {},
  ) {
    this.#pingMs = timing.pingMs ?? 1_000;
    this.#silenceLimitMs = timing.silenceLimitMs ?? 10_000;
    this.ready = new Promise((resolve) => (this.#settleReady = resolve));
    // The last argument names the helper in `ps`.
    const [command, ...args] = [...prefix, process.execPath, '-e', HELPER_PROGRAM, SPAWN_HELPER_NAME];
    // Nothing of the host's environment (no NODE_OPTIONS, no secrets): the helper needs none, and
    // its children get exactly the environment each spawn names.
    this.#proc = spawn(command!, args, { stdio: ['ignore', 'ignore', 'ignore', 'ipc'], env: {}, detached: true, cwd: '/' });
    this.#proc.on('message', (message: HelperMessage, handle: unknown) => this.#onMessage(message, handle));
    this.#proc.on('error', (error) => this.#lost(`could not be started (${error.message})`));
    this.#proc.on('exit', (code, signal) => this.#lost(signal ? `was killed by ${signal}` : `exited with code ${code}`));
    this.#proc.unref();
    this.#updateRef();
  }

  /** The helper's pid (its own process group), for the exit safety net. */
  get pid(): number | undefined {
    return this.#proc.pid;
  }

  /** True while spawns can go through the helper. */
  get usable(): boolean {
    return this.#ready && !this.#gone && !this.#retiring;
  }

  /**
   * Starts `command args` through the helper. Rejects with `SpawnHelperUnavailable` when the helper
   * never saw the request (the caller may spawn it elsewhere), and with another error when the
   * spawn failed or the helper was lost after the request left: it may have started the child,
   * so the request must not be repeated.
   */
  spawn(command: string, args: readonly string[], options: { cwd: string; env: Readonly<Record<string, string>> }): Promise<HelperChild> {
    if (!this.usable) return Promise.reject(new SpawnHelperUnavailable('the spawn helper is not running'));
    const id = this.#next++;
    return new Promise<HelperChild>((resolve, reject) => {
      const unsent = (error: unknown): void => {
        if (!this.#pending.delete(id)) return;
        this.#updateRef();
        reject(
          new SpawnHelperUnavailable(`the spawn helper could not be reached (${error instanceof Error ? error.message : String(error)})`),
        );
        this.#lost('could not be reached');
      };
      this.#pending.set(id, { resolve, reject });
      this.#updateRef();
      try {
        this.#proc.send({ type: 'spawn', id, command, args, cwd: options.cwd, env: options.env }, (error) => {
          if (error) unsent(error);
        });
      } catch (error) {
        unsent(error);
      }
    });
  }

  /** Stops the helper now; children it started and that still run are killed with it. */
  close(): void {
    this.#lost('was closed');
  }

  /**
   * Takes no more spawns, and stops once the children it started and the spawns it owes are done.
   * Its last user lets go this way: children other code started through it (the helper is shared
   * by the process) run on undisturbed.
   */
  retire(): void {
    this.#retiring = true;
    this.#closeIfIdle();
  }

  #closeIfIdle(): void {
    if (this.#retiring && this.#pending.size === 0 && this.#children.size === 0) this.close();
  }

  #onMessage(message: HelperMessage, handle: unknown): void {
    this.#lastHeard = performance.now();
    if (message.type === 'ready') {
      this.#ready = true;
      this.#settleReady(true);
      this.#updateRef();
      return;
    }
    if (message.type === 'pong') return;
    if (message.type === 'exit') {
      const child = this.#children.get(message.id);
      this.#children.delete(message.id);
      child?.exited(message.code, message.signal);
      this.#updateRef();
      return;
    }
    const pending = this.#pending.get(message.id);
    if (pending === undefined) return;
    if (message.type === 'failed') {
      this.#settle(message.id);
      const error: NodeJS.ErrnoException = new Error(message.message);
      if (message.code !== undefined) error.code = message.code;
      pending.reject(error);
    } else if (message.type === 'spawned') {
      const id = message.id;
      pending.child = new HelperChild(message.pid, (signal) => this.#send({ type: 'kill', id, signal }));
      this.#children.set(id, pending.child);
    } else if (message.type === 'stdio' && pending.child !== undefined) {
      if (handle === undefined) {
        // Node sends the message alone when the handle was closed before it left.
        this.#settle(message.id);
        pending.child.kill('SIGKILL');
        pending.reject(new Error(`the spawn helper lost fd ${message.fd} of child ${pending.child.pid}`));
      } else if (pending.child.attach(message.fd, handle as Socket)) {
        this.#settle(message.id);
        pending.resolve(pending.child);
      }
    }
  }

  #send(message: object): void {
    try {
      if (this.#proc.connected) this.#proc.send(message);
    } catch {
      // The channel is closing; its exit is handled by #lost.
    }
  }

  #settle(id: number): void {
    this.#pending.delete(id);
    this.#updateRef();
  }

  /**
   * While the helper owes an answer or runs children, the host is kept alive (as that child's own
   * process handle would keep it) and the helper is watched: pinged when quiet, given up on when a
   * ping goes unanswered for the silence limit (a stopped or hung helper would otherwise never
   * report an exit). An idle helper does neither.
   */
  #updateRef(): void {
    if (this.#gone) return;
    this.#closeIfIdle();
    if (this.#gone) return;
    const channel = this.#proc.channel as { ref?: () => void; unref?: () => void } | null | undefined;
    const busy = !this.#ready || this.#pending.size > 0 || this.#children.size > 0;
    if (busy) {
      channel?.ref?.();
      this.#watchdog ??= setInterval(() => this.#watch(), this.#pingMs);
    } else {
      channel?.unref?.();
      clearInterval(this.#watchdog);
      this.#watchdog = undefined;
      this.#pingSentAt = undefined;
    }
  }

  #watch(): void {
    const now = performance.now();
    if (!this.#ready) {
      if (now - this.#startedAt >= this.#silenceLimitMs) this.#lost(`did not start within ${this.#silenceLimitMs / 1000} s`);
      return;
    }
    if (this.#pingSentAt === undefined || this.#lastHeard >= this.#pingSentAt) {
      if (now - this.#lastHeard >= this.#pingMs) {
        this.#pingSentAt = now;
        this.#send({ type: 'ping' });
      }
      return;
    }
    if (now - this.#pingSentAt < this.#silenceLimitMs) return;
    // Timers run before the event loop reads the channel: after a long block of the host's own,
    // the answer may be waiting there. Judge once the loop has read it.
    const pingSentAt = this.#pingSentAt;
    setImmediate(() => {
      if (this.#lastHeard < pingSentAt) this.#lost(`did not answer for ${this.#silenceLimitMs / 1000} s`);
    });
  }

  /** The helper is gone or given up on: later spawns go elsewhere, its children are killed. */
  #lost(reason: string): void {
    if (this.#gone) return;
    this.#gone = true;
    clearInterval(this.#watchdog);
    this.#settleReady(false);
    const wasReady = this.#ready;
    try {
      if (this.#proc.connected) this.#proc.disconnect();
    } catch {
      // Already disconnected.
    }
    if (this.#proc.exitCode === null && this.#proc.signalCode === null) this.#proc.kill('SIGKILL');
    // A request that left may have started its child: it fails rather than being started again.
    for (const [id, pending] of this.#pending) {
      this.#pending.delete(id);
      if (pending.child !== undefined) killGroup(pending.child.pid, 'SIGKILL');
      pending.reject(new SpawnHelperLost(`the spawn helper ${reason} before it reported the child; it was not started again`));
    }
    // Children whose exit the helper can no longer report: make sure they are gone, and say so.
    for (const child of this.#children.values()) {
      killGroup(child.pid, 'SIGKILL');
      child.lostWithHelper = `the spawn helper ${reason}`;
      child.exited(null, 'SIGKILL');
    }
    this.#children.clear();
    if (wasReady && reason !== 'was closed') this.onGone(`the spawn helper ${reason}; children are started by the host from now on`);
  }
}
