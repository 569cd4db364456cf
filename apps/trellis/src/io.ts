/** Where a command writes. The real CLI passes process streams; tests pass buffers. */
export interface CommandIO {
  out(text: string): void;
  err(text: string): void;
  /** True when stdin and stderr are terminals, so the CLI may prompt. */
  readonly interactive: boolean;
  /** Reads one answer line from the terminal (only called when interactive). */
  ask?(question: string): Promise<string>;
  /**
   * Runs `cleanup` if the process is interrupted (SIGINT, SIGTERM, SIGHUP) while a command holds plugin
   * processes, then exits; returns a function that removes the trap.
   */
  trapSignals?(cleanup: () => Promise<void>, signals?: readonly NodeJS.Signals[]): () => void;
  /** Reads all of standard input as UTF-8 (for `--args -`); rejects past `maxBytes`. */
  readStdin?(maxBytes: number): Promise<string>;
}

/** Renders rows as aligned columns; the last column is never padded. */
export function formatTable(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n') + '\n';
}

/** JSON for `--json` output: two-space indented, one trailing newline. */
export function toJson(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}
