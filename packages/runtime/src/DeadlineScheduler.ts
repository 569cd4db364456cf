/** Something with a deadline; `expire` runs at most once, when the deadline passes. */
export interface Expirable {
  /** Absolute deadline, `performance.now()` clock. */
  deadlineAt: number;
  /** Position in the scheduler's heap; -1 when not scheduled. Owned by the scheduler. */
  heapIndex: number;
  expire(): void;
}

/**
 * One timer for every in-flight call: a binary min-heap of deadlines with a single `setTimeout`
 * armed for the earliest. Adding and removing are O(log n) and allocate nothing; the timer is
 * re-armed only when a new deadline is earlier than the armed one, and is unref'd while nothing is
 * scheduled (so an idle runtime never keeps the process alive), ref'd again when a call is added.
 */
export class DeadlineScheduler {
  private readonly heap: Expirable[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  private armedAt = Number.POSITIVE_INFINITY;
  private readonly onTimer = (): void => this.fire();

  add(item: Expirable): void {
    const heap = this.heap;
    item.heapIndex = heap.length;
    heap.push(item);
    this.up(item.heapIndex);
    if (item.deadlineAt < this.armedAt) this.arm(item.deadlineAt);
    else if (heap.length === 1) this.timer?.ref();
  }

  remove(item: Expirable): void {
    const index = item.heapIndex;
    if (index < 0) return;
    const heap = this.heap;
    const last = heap.pop() as Expirable;
    item.heapIndex = -1;
    if (index < heap.length) {
      heap[index] = last;
      last.heapIndex = index;
      this.down(index);
      this.up(last.heapIndex);
    }
    if (heap.length === 0) this.timer?.unref();
  }

  /** A copy of the scheduled items, in no particular order. */
  items(): Expirable[] {
    return [...this.heap];
  }

  /** Stops the timer; scheduled items are dropped without expiring. */
  clear(): void {
    for (const item of this.heap) item.heapIndex = -1;
    this.heap.length = 0;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.armedAt = Number.POSITIVE_INFINITY;
  }

  get size(): number {
    return this.heap.length;
  }

  private arm(at: number): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.armedAt = at;
    this.timer = setTimeout(this.onTimer, Math.max(0, Math.ceil(at - performance.now())));
  }

  private fire(): void {
    this.timer = undefined;
    this.armedAt = Number.POSITIVE_INFINITY;
    const heap = this.heap;
    // Timers may fire up to a millisecond early against performance.now(); treat that as due.
    const now = performance.now() + 1;
    while (heap.length > 0 && (heap[0] as Expirable).deadlineAt <= now) {
      const item = heap[0] as Expirable;
      this.remove(item);
      try {
        item.expire();
      } catch {
        // expire() is the runtime's own code and does not throw; never let one item stop the rest.
      }
    }
    if (heap.length > 0) this.arm((heap[0] as Expirable).deadlineAt);
  }

  private up(index: number): void {
    const heap = this.heap;
    const item = heap[index] as Expirable;
    while (index > 0) {
      const parentIndex = (index - 1) >> 1;
      const parent = heap[parentIndex] as Expirable;
      if (parent.deadlineAt <= item.deadlineAt) break;
      heap[index] = parent;
      parent.heapIndex = index;
      index = parentIndex;
    }
    heap[index] = item;
    item.heapIndex = index;
  }

  private down(index: number): void {
    const heap = this.heap;
    const length = heap.length;
    const item = heap[index] as Expirable;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= length) break;
      const right = left + 1;
      let child = left;
      if (right < length && (heap[right] as Expirable).deadlineAt < (heap[left] as Expirable).deadlineAt) child = right;
      const smaller = heap[child] as Expirable;
      if (smaller.deadlineAt >= item.deadlineAt) break;
      heap[index] = smaller;
      smaller.heapIndex = index;
      index = child;
    }
    heap[index] = item;
    item.heapIndex = index;
  }
}
