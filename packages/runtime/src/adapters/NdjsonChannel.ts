import type { Writable } from 'node:stream';
import { LineSplitter } from './LineSplitter.ts';
import { previewPluginValue } from './renderPluginValue.ts';

/** A JSON object read from or written to a plugin. */
export type Message = Record<string, unknown>;

/** How a request ended. */
export type Reply =
  /** The plugin answered. */
  | { readonly kind: 'message'; readonly message: Message }
  /** The plugin broke the protocol in a way that could be pinned on this request. */
  | { readonly kind: 'protocol'; readonly message: string }
  /** The channel closed (the child exited) before an answer. */
  | { readonly kind: 'exit'; readonly message: string }
  /** The request's signal fired or its deadline passed first. */
  | { readonly kind: 'stopped' }
  /** The channel stopped taking work before this request was written: send it elsewhere. */
  | { readonly kind: 'retired' };

/** A progress report a plugin sent for a request (`{"id":N,"type":"progress",...}`). */
export interface RequestProgress {
  readonly progress: number;
  readonly total?: number;
  readonly message?: string;
}

/** When a request gives up: an absolute `performance.now()` deadline and, optionally, a signal. */
export interface RequestLimits {
  readonly deadlineAt: number;
  readonly signal?: AbortSignal;
  /**
   * When present, used instead of `signal` (which is then never read): subscribes a listener to
   * the request's interruption and returns its unsubscribe. A runtime call provides it (see
   * `ImplementationCall.onInterrupt`): one closure per request instead of creating the call's
   * AbortSignal and an EventTarget listener, which cost more than the rest of a call together.
   */
  onInterrupt?(listener: () => void): () => void;
  /** Where this request's progress reports go; a report is never its reply. */
  readonly onProgress?: (progress: RequestProgress) => void;
}

/** Everything a channel needs from its owner. */
export interface NdjsonChannelOptions {
  /** The child's stdin. */
  readonly input: Writable;
  /** Longest reply line; a longer one is dropped and fails only the request it belongs to. */
  readonly maxLineBytes: number;
  /** A protocol problem no request could be blamed for (logged by the owner). */
  readonly onWarning: (message: string) => void;
  /**
   * The stream cannot be trusted for new requests (an oversize line with no end in sight, or an
   * unanswered request to a plugin that does not echo ids). The channel has retired itself; the
   * owner should start a fresh child and stop this one once it is idle.
   */
  readonly onDesync: (reason: string) => void;
  /** A retired channel's last in-flight request settled. */
  readonly onIdle?: () => void;
}

interface Pending {
  readonly line: string;
  readonly deadlineAt: number;
  readonly resolve: (reply: Reply) => void;
  readonly onProgress: ((progress: RequestProgress) => void) | undefined;
  id: number;
  /** Stops listening for the request's interruption (signal or `onInterrupt`). */
  detach: (() => void) | undefined;
}

const NO_ID = 0;
const ID_HEAD = /^\s*\{\s*"id"\s*:\s*(\d{1,15})\s*[,}]/;

function isMessage(value: unknown): value is Message {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function preview(text: string): string {
  return text.length > 120 ? `${text.slice(0, 120)}…` : text;
}

/**
 * The wire half of a process plugin: newline-delimited JSON framing with a per-line cap,
 * request ids, routing of replies to requests, and the one deadline mechanism every request
 * (handshake, health check, tool call) shares: a single timer armed for the earliest deadline.
 *
 * A plugin that echoes ids (`echoesIds = true`) gets requests concurrently and answers in any
 * order; one that does not (or before the handshake says) gets one request at a time, the rest
 * queued in order. Writes made in one tick are sent together.
 */
export class NdjsonChannel {
  /** Whether the plugin echoes request ids; undefined until the initialize reply says. */
  echoesIds: boolean | undefined;
  readonly #options: NdjsonChannelOptions;
  readonly #splitter: LineSplitter;
  /** Written and awaiting a reply, by id, in the order written. */
  readonly #inFlight = new Map<number, Pending>();
  /** One-at-a-time mode: waiting for their turn. */
  #queue: Pending[] = [];
  #nextId = 1;
  #closed: string | undefined;
  #retired = false;
  /** Request lines written in this tick, sent as one write when it ends (a burst of calls costs one syscall). */
  #outgoing = '';
  #sweepAt = Infinity;
  #sweepTimer: NodeJS.Timeout | undefined;
  readonly #flush = () => {
    const text = this.#outgoing;
    this.#outgoing = '';
    if (text !== '') this.#options.input.write(text);
  };

  constructor(options: NdjsonChannelOptions) {
    this.#options = options;
    this.#splitter = new LineSplitter(
      options.maxLineBytes,
      (event) => {
        if (event.kind === 'line') this.#onLine(event.line);
        else options.onWarning(`a reply line of ${event.bytes} bytes exceeded the ${options.maxLineBytes}-byte limit and was dropped`);
      },
      (head) => this.#onOversize(head),
    );
  }

  /** Requests written and not yet answered, plus those queued behind them. */
  get outstanding(): number {
    return this.#inFlight.size + this.#queue.length;
  }

  /** True once the channel takes no new requests (retired or closed). */
  get retired(): boolean {
    return this.#retired || this.#closed !== undefined;
  }

  /** Feeds bytes the child wrote to stdout. */
  push(chunk: Buffer): void {
    this.#splitter.push(chunk);
  }

  /**
   * Sends `body` (an object; the channel adds `id`) and resolves with its reply. Never rejects
   * except when `body` cannot be serialized (a bug in the caller).
   */
  request(body: Message, limits: RequestLimits): Promise<Reply> {
    if (this.#closed !== undefined) return Promise.resolve({ kind: 'exit', message: this.#closed });
    if (this.#retired) return Promise.resolve({ kind: 'retired' });
    const signal = limits.onInterrupt === undefined ? limits.signal : undefined;
    if (signal?.aborted === true || limits.deadlineAt <= performance.now()) return Promise.resolve({ kind: 'stopped' });
    const json = JSON.stringify(body);
    const line = json.length <= 2 ? '}' : `,${json.slice(1)}`;
    return new Promise<Reply>((resolve) => {
      const pending: Pending = {
        line,
        deadlineAt: limits.deadlineAt,
        resolve,
        onProgress: limits.onProgress,
        id: NO_ID,
        detach: undefined,
      };
      if (Number.isFinite(pending.deadlineAt)) this.#armSweep(pending.deadlineAt);
      if (this.echoesIds !== true && (this.#inFlight.size > 0 || this.#queue.length > 0)) this.#queue.push(pending);
      else this.#write(pending);
      // Subscribed once the request is queued or written, so an interruption seen at once finds it.
      const stop = () => this.#stop(pending);
      if (limits.onInterrupt !== undefined) {
        pending.detach = limits.onInterrupt(stop);
      } else if (signal !== undefined) {
        signal.addEventListener('abort', stop, { once: true });
        pending.detach = () => signal.removeEventListener('abort', stop);
      }
    });
  }

  /** Takes no new requests; queued ones come back as `retired`, written ones still get their replies. */
  retire(): void {
    if (this.#retired) return;
    this.#retired = true;
    for (const p of this.#queue.splice(0)) this.#settle(p, { kind: 'retired' });
    this.#maybeIdle();
  }

  /** The child is gone: every request ends with `exit`. */
  close(message: string): void {
    if (this.#closed !== undefined) return;
    this.#closed = message;
    this.#retired = true;
    const all = [...this.#inFlight.values(), ...this.#queue.splice(0)];
    this.#inFlight.clear();
    for (const p of all) this.#settle(p, { kind: 'exit', message }, false);
    if (this.#sweepTimer) clearTimeout(this.#sweepTimer);
    this.#sweepTimer = undefined;
    this.#sweepAt = Infinity;
  }

  /** Writes a request that expects no reply (`shutdown`) and ends the child's stdin. */
  end(body: Message): void {
    this.#retired = true;
    try {
      const input = this.#options.input;
      this.#flush();
      input.write(`${JSON.stringify({ id: this.#nextId++, ...body })}\n`);
      input.end();
    } catch {
      // stdin already closed
    }
  }

  #write(p: Pending): void {
    p.id = this.#nextId++;
    this.#inFlight.set(p.id, p);
    // One string per tick rather than cork(): a single write takes the stream's direct path, where
    // cork() turns even one line into a writev.
    if (this.#outgoing === '') process.nextTick(this.#flush);
    this.#outgoing += `{"id":${p.id}${p.line}\n`;
  }

  #settle(p: Pending, reply: Reply, pump = true): void {
    p.detach?.();
    p.detach = undefined;
    p.resolve(reply);
    if (pump) this.#pump();
  }

  /** One-at-a-time mode: writes the next queued request once nothing is in flight. */
  #pump(): void {
    if (this.#inFlight.size > 0) return;
    const next = this.#queue.shift();
    if (next !== undefined) this.#write(next);
    else this.#maybeIdle();
  }

  #maybeIdle(): void {
    if (this.#retired && this.#closed === undefined && this.#inFlight.size === 0 && this.#queue.length === 0) this.#options.onIdle?.();
  }

  #deliver(id: number, reply: Reply): void {
    const p = this.#inFlight.get(id);
    if (p === undefined) return;
    this.#inFlight.delete(id);
    this.#settle(p, reply);
  }

  /** A request gave up (signal or deadline). */
  #stop(p: Pending): void {
    if (p.id === NO_ID) {
      const at = this.#queue.indexOf(p);
      if (at === -1) return;
      this.#queue.splice(at, 1);
      this.#settle(p, { kind: 'stopped' }, false);
      return;
    }
    if (!this.#inFlight.delete(p.id)) return;
    this.#settle(p, { kind: 'stopped' }, false);
    if (this.echoesIds !== true) {
      // Its late reply would be taken for the next request's: this stream is done.
      this.#desync('a request went unanswered and the plugin does not echo ids');
    } else {
      this.#pump();
    }
  }

  #desync(reason: string): void {
    if (this.#retired) return this.#maybeIdle();
    this.retire();
    this.#options.onDesync(reason);
  }

  #armSweep(at: number): void {
    if (at >= this.#sweepAt || this.#closed !== undefined) return;
    if (this.#sweepTimer) clearTimeout(this.#sweepTimer);
    this.#sweepAt = at;
    this.#sweepTimer = setTimeout(this.#sweep, Math.max(0, at - performance.now()));
    this.#sweepTimer.unref();
  }

  readonly #sweep = (): void => {
    this.#sweepTimer = undefined;
    this.#sweepAt = Infinity;
    const now = performance.now();
    let next = Infinity;
    for (const p of [...this.#inFlight.values(), ...this.#queue]) {
      if (p.deadlineAt <= now + 1) this.#stop(p);
      else if (p.deadlineAt < next) next = p.deadlineAt;
    }
    if (next < Infinity) this.#armSweep(next);
  };

  /** A problem that cannot be matched to a request fails the one in flight, if there is exactly one. */
  #blame(message: string): void {
    if (this.#inFlight.size === 1) {
      const [only] = this.#inFlight.keys();
      this.#deliver(only!, { kind: 'protocol', message });
    } else {
      this.#options.onWarning(`${message} (${this.#inFlight.size} requests outstanding, none blamed)`);
    }
  }

  #onOversize(head: string): void {
    const message = `a reply line exceeds the ${this.#options.maxLineBytes}-byte limit (it began ${JSON.stringify(preview(head))})`;
    const id = ID_HEAD.exec(head)?.[1];
    if (id !== undefined && this.#inFlight.has(Number(id))) this.#deliver(Number(id), { kind: 'protocol', message });
    else this.#blame(message);
    // Until that line's newline arrives, if it ever does, nothing on this stream can be read.
    this.#desync('a reply line exceeded the size limit');
  }

  #onLine(line: string): void {
    if (line.length === 0 || (line.charCodeAt(0) <= 32 && line.trim() === '')) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      this.#blame(`the plugin wrote a line that is not JSON: ${JSON.stringify(preview(line))}`);
      return;
    }
    if (!isMessage(parsed)) {
      this.#blame(`the plugin wrote JSON that is not an object: ${preview(line)}`);
      return;
    }
    const id = parsed.id;
    if (parsed.type === 'progress') {
      // A progress report is not a reply: the request stays outstanding.
      const listener = typeof id === 'number' ? this.#inFlight.get(id)?.onProgress : undefined;
      if (listener !== undefined && typeof parsed.progress === 'number' && Number.isFinite(parsed.progress)) {
        listener({
          progress: parsed.progress,
          ...(typeof parsed.total === 'number' && Number.isFinite(parsed.total) ? { total: parsed.total } : {}),
          ...(typeof parsed.message === 'string' ? { message: parsed.message.slice(0, 1000) } : {}),
        });
      }
      return;
    }
    if (id !== undefined) {
      if (typeof id === 'number' && this.#inFlight.has(id)) {
        this.#deliver(id, { kind: 'message', message: parsed });
      } else if (typeof id === 'number' && Number.isInteger(id) && id > 0 && id < this.#nextId) {
        // Ids only grow, so an id below the next one that is not in flight was answered or given up on.
        this.#options.onWarning(`a late or duplicate reply for request ${id} was dropped`);
      } else {
        this.#blame(`the plugin answered with id ${previewPluginValue(id)}, which matches no outstanding request`);
      }
      return;
    }
    if (this.echoesIds === true) {
      this.#blame('the plugin echoed ids before but sent a reply without one');
      return;
    }
    const [oldest] = this.#inFlight.keys();
    if (oldest === undefined)
      this.#options.onWarning('a reply arrived while no request was outstanding (late or duplicate) and was dropped');
    else this.#deliver(oldest, { kind: 'message', message: parsed });
  }
}
