import type { PluginImplementation } from '../PluginImplementation.ts';
import type { WaitList } from './WaitList.ts';

/** What a gate needs of a waiting call: a flag it owns while queued, and a way to hand over a slot. */
export interface GateWaiter {
  queued: boolean;
  /** Called when a slot passes to this call. */
  grant(): void;
}

/** A plugin's implementation (resolved once) and its concurrency gate (`[runtime] max_concurrency`). */
export class PluginGate {
  impl: PluginImplementation | undefined;
  resolved = false;
  /** The one start shared by every call that arrives before the implementation is loaded. */
  starting: Promise<void> | undefined;
  /** The calls waiting for that start (see `RuntimeCore.startWait`). */
  startWaiting: WaitList | undefined;
  active = 0;
  private readonly queue: GateWaiter[] = [];
  private queueStart = 0;

  constructor(
    readonly id: string,
    readonly limit: number,
  ) {}

  tryAcquire(): boolean {
    if (this.active < this.limit) {
      this.active += 1;
      return true;
    }
    return false;
  }

  enqueue(waiter: GateWaiter): void {
    waiter.queued = true;
    this.queue.push(waiter);
  }

  dequeue(waiter: GateWaiter): void {
    const index = this.queue.indexOf(waiter, this.queueStart);
    if (index >= 0) this.queue.splice(index, 1);
    waiter.queued = false;
  }

  release(): void {
    while (this.queueStart < this.queue.length) {
      const next = this.queue[this.queueStart] as GateWaiter;
      this.queueStart += 1;
      if (this.queueStart > 64 && this.queueStart * 2 > this.queue.length) {
        this.queue.splice(0, this.queueStart);
        this.queueStart = 0;
      }
      if (!next.queued) continue;
      next.queued = false;
      next.grant(); // the slot passes to the next call in line
      return;
    }
    this.active -= 1;
  }
}
