import type { Logger } from '@trellis/sdk';
import { LineSplitter } from './LineSplitter.ts';

/** Lines of a plugin's stderr logged per window; the rest are counted and reported once. */
export const STDERR_LINES_PER_WINDOW = 50;
/** Length of a rate window, in milliseconds. */
export const STDERR_WINDOW_MS = 1000;
const MAX_STDERR_LINE = 8 * 1024;
const TAIL_CHARS = 2000;

/**
 * Forwards a child's stderr to the debug logger line by line, at most
 * `STDERR_LINES_PER_WINDOW` lines per second, and keeps the last 2000 characters for error
 * messages (e.g. why a plugin died before its handshake).
 */
export class StderrRelay {
  readonly #logger: Logger;
  readonly #pluginId: string;
  readonly #splitter: LineSplitter;
  #windowStart = 0;
  #inWindow = 0;
  #suppressed = 0;
  #tail = '';

  constructor(options: { pluginId: string; logger: Logger }) {
    this.#logger = options.logger;
    this.#pluginId = options.pluginId;
    this.#splitter = new LineSplitter(MAX_STDERR_LINE, (event) => {
      this.#line(event.kind === 'line' ? event.line : `[a stderr line of ${event.bytes} bytes was dropped]`);
    });
  }

  push(chunk: Buffer): void {
    const text = chunk.toString('utf8');
    this.#tail = (this.#tail + text).slice(-TAIL_CHARS);
    this.#splitter.push(chunk);
  }

  /** The last characters the child wrote to stderr, trimmed; empty when it wrote nothing. */
  tail(): string {
    return this.#tail.trim();
  }

  /** Reports lines still held back by the rate cap. */
  flush(): void {
    if (this.#suppressed > 0) {
      this.#logger.debug('plugin stderr lines suppressed by the rate cap', { plugin: this.#pluginId, suppressed: this.#suppressed });
      this.#suppressed = 0;
    }
  }

  #line(line: string): void {
    const now = performance.now();
    if (now - this.#windowStart >= STDERR_WINDOW_MS) {
      this.flush();
      this.#windowStart = now;
      this.#inWindow = 0;
    }
    if (this.#inWindow >= STDERR_LINES_PER_WINDOW) {
      this.#suppressed += 1;
      return;
    }
    this.#inWindow += 1;
    if (line.length > 0) this.#logger.debug('plugin stderr', { plugin: this.#pluginId, line });
  }
}
