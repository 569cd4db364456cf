import type { ConnectorHost, InboundMessage, Logger, ReplyEvent } from '@trellis/sdk';

/** One log line as a test sees it. */
export interface LogEntry {
  readonly level: string;
  readonly message: string;
  readonly fields?: Record<string, unknown>;
}

/** A logger that keeps every line in `lines`. */
export function recordingLogger(): Logger & { lines: LogEntry[] } {
  const lines: LogEntry[] = [];
  const log = (level: string) => (message: string, fields?: Readonly<Record<string, unknown>>) =>
    void lines.push({ level, message, ...(fields ? { fields: { ...fields } } : {}) });
  return { lines, debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
}

/** A host that answers from a function; the agent loop itself is tested in @trellis/agent and end to end. */
export function scriptedHost(
  answer: (m: InboundMessage) => Promise<ReplyEvent[]> | ReplyEvent[],
): ConnectorHost & { seen: InboundMessage[]; resets: string[] } {
  const seen: InboundMessage[] = [];
  const resets: string[] = [];
  return {
    seen,
    resets,
    async *handle(message) {
      seen.push(message);
      for (const e of await answer(message)) yield e;
    },
    reset: (id) => void resets.push(id),
  };
}

/** Resolves when `predicate` holds, checked every 10 ms; rejects after `timeoutMs`. */
export async function until(predicate: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
