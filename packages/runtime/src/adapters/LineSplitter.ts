/** What a `LineSplitter` hands on: a whole line, or the news that one was too long and was dropped. */
export type SplitEvent = { readonly kind: 'line'; readonly line: string } | { readonly kind: 'oversize'; readonly bytes: number };

const NEWLINE = 0x0a;

/**
 * Splits a byte stream into newline-terminated lines without holding more than `maxLineBytes`
 * of any one line: a longer line is skipped up to its newline and reported as `oversize`.
 * A trailing line without a newline is never emitted (the writer died mid-line).
 */
export class LineSplitter {
  readonly #maxLineBytes: number;
  readonly #onEvent: (event: SplitEvent) => void;
  readonly #onOversizeStart: ((head: string) => void) | undefined;
  #chunks: Buffer[] = [];
  #bytes = 0;
  #discarding = false;
  #discarded = 0;

  /**
   * `onOversizeStart`, when given, hears of an oversize line as soon as it crosses the limit,
   * with its first bytes (at most 64), long before its newline arrives, if it ever does.
   */
  constructor(maxLineBytes: number, onEvent: (event: SplitEvent) => void, onOversizeStart?: (head: string) => void) {
    this.#maxLineBytes = maxLineBytes;
    this.#onEvent = onEvent;
    this.#onOversizeStart = onOversizeStart;
  }

  push(chunk: Buffer): void {
    // Fast path: one whole line in one chunk, nothing held back (the usual reply).
    if (this.#bytes === 0 && !this.#discarding && chunk.length <= this.#maxLineBytes && chunk.indexOf(NEWLINE) === chunk.length - 1) {
      this.#onEvent({ kind: 'line', line: chunk.toString('utf8', 0, chunk.length - 1) });
      return;
    }
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(NEWLINE, start);
      const end = nl === -1 ? chunk.length : nl;
      const piece = chunk.subarray(start, end);
      if (this.#discarding) {
        this.#discarded += piece.length;
      } else if (this.#bytes + piece.length > this.#maxLineBytes) {
        this.#discarding = true;
        this.#discarded = this.#bytes + piece.length;
        const head =
          this.#onOversizeStart === undefined
            ? ''
            : Buffer.concat([...this.#chunks, piece.subarray(0, 64)])
                .subarray(0, 64)
                .toString('utf8');
        this.#chunks = [];
        this.#bytes = 0;
        this.#onOversizeStart?.(head);
      } else if (piece.length > 0) {
        this.#chunks.push(piece);
        this.#bytes += piece.length;
      }
      if (nl === -1) break;
      if (this.#discarding) {
        this.#onEvent({ kind: 'oversize', bytes: this.#discarded });
        this.#discarding = false;
        this.#discarded = 0;
      } else {
        const line = this.#chunks.length === 1 ? this.#chunks[0]!.toString('utf8') : Buffer.concat(this.#chunks).toString('utf8');
        this.#chunks = [];
        this.#bytes = 0;
        this.#onEvent({ kind: 'line', line });
      }
      start = nl + 1;
    }
  }
}
