/** A one-reader async queue: the producer pushes without waiting, the reader awaits. Unbounded (a turn is finite). */
export class EventChannel<T> implements AsyncIterable<T> {
  private readonly buffer: T[] = [];
  private wake: (() => void) | undefined;
  private closed = false;
  private iterated = false;

  push(value: T): void {
    if (this.closed) return;
    this.buffer.push(value);
    this.wake?.();
  }

  close(): void {
    this.closed = true;
    this.wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    if (this.iterated) throw new Error('a turn can be iterated once');
    this.iterated = true;
    for (;;) {
      while (this.buffer.length > 0) yield this.buffer.shift() as T;
      if (this.closed) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
  }
}
