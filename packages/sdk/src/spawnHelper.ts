import { EventEmitter } from 'node:events';
import type { ChildProcess, spawn as SpawnFunction } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';

/**
 * A child Trellis started, spawned by this process or by the spawn helper: the part of a
 * `ChildProcess` the host uses. `'close'` follows `'exit'` once stdout and stderr are closed.
 */
export interface StartedChild {
  readonly pid?: number | undefined;
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
 * leads its own process group) and sends the child's pid, its three stdio sockets and, later, its
 * exit status back over the IPC channel. The host then talks to the child directly: no byte of a
 * call passes through here. When the host goes away (the channel closes) it kills every group it
 * started and exits.
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
const send = (message, handle) => { if (process.connected) process.send(message, handle); };
process.on('message', (m) => {
  if (m === null || typeof m !== 'object' || m.type !== 'spawn') return;
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

/** How long a spawn may wait for the helper's answer before the helper is given up on. */
const ANSWER_TIMEOUT_MS = 5_000;

/** The helper cannot take this spawn (not started yet, gone, or not answering): spawn here instead. */
export class SpawnHelperUnavailable extends Error {}

type HelperMessage =
  | { type: 'ready' }
  | { type: 'spawned'; id: number; pid: number }
  | { type: 'stdio'; id: number; fd: 0 | 1 | 2 }
  | { type: 'failed'; id: number; code?: string; message: string }
  | { type: 'exit'; id: number; code: number | null; signal: NodeJS.Signals | null };

/** A child the helper started; the host holds its stdio sockets, the helper its exit status. */
class HelperChild extends EventEmitter implements StartedChild {
  stdin!: Writable;
  stdout!: Readable;
  stderr!: Readable;
  #exited = false;
  #open = 2;
  #closed = false;

  constructor(readonly pid: number) {
    super();
  }

  /** Takes one of the child's stdio sockets; true once all three are here. */
  attach(fd: 0 | 1 | 2, socket: Readable & Writable): boolean {
    if (fd === 0) this.stdin = socket;
    else {
      if (fd === 1) this.stdout = socket;
      else this.stderr = socket;
      socket.once('close', () => {
        this.#open -= 1;
        this.#maybeClose();
      });
    }
    return this.stdin !== undefined && this.stdout !== undefined && this.stderr !== undefined;
  }

  kill(signal: NodeJS.Signals = 'SIGTERM'): boolean {
    if (this.#exited) return false;
    try {
      process.kill(this.pid, signal);
      return true;
    } catch {
      return false;
    }
  }

  exited(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.#exited) return;
    this.#exited = true;
    this.stdin?.destroy();
    this.emit('exit', code, signal);
    this.#maybeClose();
  }

  #maybeClose(): void {
    if (!this.#exited || this.#open > 0 || this.#closed) return;
    this.#closed = true;
    this.emit('close');
  }
}

interface Pending {
  readonly resolve: (child: HelperChild) => void;
  readonly reject: (error: Error) => void;
  readonly timer: NodeJS.Timeout;
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
  ) {
    this.ready = new Promise((resolve) => (this.#settleReady = resolve));
    // The last argument names the helper in `ps`.
    const [command, ...args] = [...prefix, process.execPath, '-e', HELPER_PROGRAM, SPAWN_HELPER_NAME];
    // Nothing of the host's environment (no NODE_OPTIONS, no secrets): the helper needs none, and
    // its children get exactly the environment each spawn names.
    this.#proc = spawn(command!, args, { stdio: ['ignore', 'ignore', 'ignore', 'ipc'], env: {}, detached: true, cwd: '/' });
    this.#proc.on('message', (message: HelperMessage, handle: unknown) => this.#onMessage(message, handle));
    this.#proc.on('error', (error) => this.#lost(`could not be started (${error.message})`));
    this.#proc.on('exit', (code, signal) => this.#lost(signal ? `was killed by ${signal}` : `exited with code ${code}`));
  }

  /**
   * Once ready, an idle helper does not keep the host alive; one with a child running or a spawn
   * pending does, as that child's own process handle would (its exit is still to come).
   */
  #updateRef(): void {
    const channel = this.#proc.channel as { ref?: () => void; unref?: () => void } | null | undefined;
    if (this.#pending.size > 0 || this.#children.size > 0) channel?.ref?.();
    else channel?.unref?.();
  }

  /** The helper's pid (its own process group), for the exit safety net. */
  get pid(): number | undefined {
    return this.#proc.pid;
  }

  /** True while spawns can go through the helper. */
  get usable(): boolean {
    return this.#ready && !this.#gone;
  }

  /** Starts `command args` through the helper; rejects with `SpawnHelperUnavailable` when it cannot. */
  spawn(
    command: string,
    args: readonly string[],
    options: { cwd?: string | undefined; env: Readonly<Record<string, string>> },
  ): Promise<HelperChild> {
    if (!this.usable) return Promise.reject(new SpawnHelperUnavailable('the spawn helper is not running'));
    const id = this.#next++;
    return new Promise<HelperChild>((resolve, reject) => {
      const timer = setTimeout(() => this.#lost(`did not answer a spawn within ${ANSWER_TIMEOUT_MS / 1000} s`), ANSWER_TIMEOUT_MS);
      this.#pending.set(id, { resolve, reject, timer });
      this.#updateRef();
      try {
        this.#proc.send({ type: 'spawn', id, command, args, cwd: options.cwd, env: options.env });
      } catch (error) {
        this.#lost(`could not be reached (${error instanceof Error ? error.message : String(error)})`);
      }
    });
  }

  /** Stops the helper; children it started and that still run are killed with it. */
  close(): void {
    if (this.#gone) return;
    this.#lost('was closed');
  }

  #onMessage(message: HelperMessage, handle: unknown): void {
    if (message.type === 'ready') {
      this.#ready = true;
      this.#proc.unref();
      this.#updateRef();
      this.#settleReady(true);
      return;
    }
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
      pending.child = new HelperChild(message.pid);
      this.#children.set(message.id, pending.child);
    } else if (message.type === 'stdio' && pending.child !== undefined) {
      if (handle === undefined) {
        // Node sends the message alone when the handle was closed before it left.
        this.#settle(message.id);
        killGroupQuietly(pending.child.pid);
        pending.reject(new Error(`the spawn helper lost fd ${message.fd} of child ${pending.child.pid}`));
      } else if (pending.child.attach(message.fd, handle as Readable & Writable)) {
        this.#settle(message.id);
        pending.resolve(pending.child);
      }
    }
  }

  #settle(id: number): void {
    const pending = this.#pending.get(id);
    if (pending === undefined) return;
    clearTimeout(pending.timer);
    this.#pending.delete(id);
    this.#updateRef();
  }

  /** The helper is gone or given up on: later spawns fall back, its children are killed. */
  #lost(reason: string): void {
    if (this.#gone) return;
    this.#gone = true;
    this.#settleReady(false);
    const wasReady = this.#ready;
    try {
      if (this.#proc.connected) this.#proc.disconnect();
    } catch {
      // Already disconnected.
    }
    if (this.#proc.exitCode === null && this.#proc.signalCode === null) this.#proc.kill('SIGKILL');
    for (const [id, pending] of this.#pending) {
      this.#settle(id);
      if (pending.child !== undefined) killGroupQuietly(pending.child.pid);
      pending.reject(new SpawnHelperUnavailable(`the spawn helper ${reason}`));
    }
    // Children whose exit the helper can no longer report: make sure they are gone, and say so.
    for (const child of this.#children.values()) {
      killGroupQuietly(child.pid);
      child.exited(null, 'SIGKILL');
    }
    this.#children.clear();
    if (wasReady && reason !== 'was closed') this.onGone(`the spawn helper ${reason}; children are started by the host from now on`);
  }
}

function killGroupQuietly(pgid: number): void {
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}
