/**
 * The subscribers to one kind of event. `emit` calls each in turn; one that throws is reported to
 * `onError` and neither stops the others nor reaches the emitter, so a faulty subscriber can never
 * break the host that notifies it.
 */
export class Listeners<T> {
  readonly #listeners = new Set<(value: T) => void>();

  constructor(private readonly onError: (error: unknown) => void) {}

  /** Subscribes `listener`; returns the function that unsubscribes it. */
  add(listener: (value: T) => void): () => void {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }

  /** Calls every listener subscribed now (one that subscribes during the call waits for the next). */
  emit(value: T): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(value);
      } catch (error) {
        this.onError(error);
      }
    }
  }

  clear(): void {
    this.#listeners.clear();
  }
}
