import { ERROR_CODES, type ToolFailure, type ToolProgress } from '@trellis/sdk';
import type { Expirable } from '../DeadlineScheduler.ts';
import type { ImplementationCall } from '../PluginImplementation.ts';
import type { GateWaiter, PluginGate } from './PluginGate.ts';

/** What a raced wait resolves to when the call was interrupted first. */
export const INTERRUPTED: unique symbol = Symbol('interrupted');
export type Interrupted = typeof INTERRUPTED;

export const noop = (): void => {};

/**
 * One call in flight, as the implementation sees it (`ImplementationCall`), the deadline
 * scheduler sees it (`Expirable`) and its plugin's gate sees it (`GateWaiter`).
 */
export class Invocation implements ImplementationCall, Expirable, GateWaiter {
  tool = '';
  input: unknown = undefined;
  deadlineAt = 0;
  heapIndex = -1;
  queued = false;
  awaitingApproval = false;
  timeoutMs = 0;
  attempts = 0;
  gate: PluginGate | undefined;
  interrupted: ToolFailure | undefined;
  onProgress: ((update: ToolProgress) => void) | undefined = undefined;
  /** Set while the call is parked in a wait list: interrupting or granting it runs it on. */
  parked: { resume(): void } | undefined = undefined;
  /** Whether its plugin's gate handed this call a slot while it was parked in the queue. */
  granted = false;
  private controller: AbortController | undefined;
  private wake: ((value: Interrupted | undefined) => void) | undefined;
  /** `onInterrupt` listeners: usually none, or one (the process adapter's request). */
  private listeners: Array<() => void> | undefined;

  constructor(
    readonly callId: string,
    readonly name: string,
  ) {}

  /** Created on first use: most in-process tools never look at it, and an AbortController costs microseconds. */
  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.interrupted !== undefined) this.controller.abort(new Error(this.interrupted.message));
    }
    return this.controller.signal;
  }

  expire(): void {
    let message: string;
    if (this.queued) {
      message = `${this.name} did not start within its ${this.timeoutMs} ms deadline: plugin ${this.gate?.id ?? '?'} was already running ${this.gate?.limit ?? '?'} calls ([runtime] max_concurrency) and this one waited in the queue`;
    } else if (this.awaitingApproval) {
      message = `${this.name} was not approved within its ${this.timeoutMs} ms deadline; nothing was run`;
    } else {
      message = `${this.name} did not finish within its ${this.timeoutMs} ms deadline and was abandoned`;
    }
    this.interrupt({ code: ERROR_CODES.TIMEOUT, message, retryable: false });
  }

  /**
   * Runs `listener` once when the call is interrupted (deadline, cancel, shutdown), at once if it
   * already was; returns the unsubscribe function. Cheaper than `signal` for adapters that only
   * need to hear of the end: no AbortController is made.
   */
  onInterrupt(listener: () => void): () => void {
    if (this.interrupted !== undefined) {
      listener();
      return noop;
    }
    (this.listeners ??= []).push(listener);
    return () => {
      const at = this.listeners?.indexOf(listener) ?? -1;
      if (at !== -1) this.listeners!.splice(at, 1);
    };
  }

  interrupt(failure: ToolFailure): void {
    if (this.interrupted !== undefined) return;
    this.interrupted = failure;
    if (this.queued) this.gate?.dequeue(this);
    this.controller?.abort(new Error(failure.message));
    const listeners = this.listeners;
    this.listeners = undefined;
    for (const listener of listeners ?? []) {
      try {
        listener();
      } catch {
        // An implementation's listener must not keep the call from ending.
      }
    }
    const wake = this.wake;
    this.wake = undefined;
    wake?.(INTERRUPTED);
    const parked = this.parked;
    // In a microtask, as a woken await would: the caller of interrupt() finishes first.
    if (parked !== undefined) queueMicrotask(() => parked.resume());
  }

  /** The outcome of an interrupted call (deadline passed, caller aborted, runtime shut down). */
  interruption(): { readonly ok: false; readonly error: ToolFailure } {
    return {
      ok: false,
      error: this.interrupted ?? {
        code: ERROR_CODES.INTERNAL_ERROR,
        message: `${this.name} was interrupted for no recorded reason`,
        retryable: false,
      },
    };
  }

  /** Waits for `promise`, or for an interruption (deadline, abort), whichever comes first. */
  race<T>(promise: Promise<T>): Promise<T | Interrupted> {
    if (this.interrupted !== undefined) {
      promise.catch(noop);
      return Promise.resolve(INTERRUPTED);
    }
    return new Promise<T | Interrupted>((resolve, reject) => {
      this.wake = resolve as (value: Interrupted | undefined) => void;
      promise.then(resolve, reject);
    });
  }

  /** Waits in the plugin's queue; resolves undefined when granted a slot, or INTERRUPTED. */
  waitForSlot(gate: PluginGate): Promise<Interrupted | undefined> {
    return new Promise((resolve) => {
      this.wake = resolve;
      gate.enqueue(this);
    });
  }

  grant(): void {
    this.granted = true;
    const wake = this.wake;
    this.wake = undefined;
    wake?.(undefined);
    // A parked call starts its attempt now: it runs until the attempt's first wait, then the
    // releasing call goes on.
    this.parked?.resume();
  }
}
