import { createWriteStream, type WriteStream } from 'node:fs';
import type { Logger } from '@trellis/sdk';

/** One line of the audit log. Argument keys only: never argument values, outputs or messages. */
export interface AuditRecord {
  /** ISO 8601 time the call ended. */
  readonly ts: string;
  readonly callId: string;
  readonly tool: string;
  /** The input's top-level keys, sorted. */
  readonly argKeys: readonly string[];
  readonly ok: boolean;
  /** `OK`, or the failure code. */
  readonly outcome: string;
  readonly durationMs: number;
  /** Attempts dispatched. */
  readonly attempts: number;
  /** The reload generation whose runtime served the call (live hosts only; see docs/reload.md). */
  readonly generation?: number;
}

/** Where audit records go. */
export interface AuditSink {
  write(record: AuditRecord): void;
  /** Flushes and closes; resolves when everything written so far is on disk. */
  close(): Promise<void>;
}

/**
 * An audit sink that appends JSON lines to `path` (created with mode 0600 when missing). Writes are
 * asynchronous and ordered; a write error is logged once and the log is then switched off, never
 * failing a call.
 */
export function createFileAuditLog(options: { path: string; logger?: Logger }): AuditSink {
  let stream: WriteStream | undefined;
  let broken = false;
  const open = (): WriteStream => {
    stream = createWriteStream(options.path, { flags: 'a', mode: 0o600 });
    stream.on('error', (error) => {
      if (!broken) options.logger?.error(`audit log ${options.path} cannot be written; audit is off: ${error.message}`);
      broken = true;
    });
    return stream;
  };
  return {
    write(record) {
      if (broken) return;
      (stream ?? open()).write(`${JSON.stringify(record)}\n`);
    },
    close() {
      const current = stream;
      stream = undefined;
      if (current === undefined || current.destroyed) return Promise.resolve();
      // Resolves on finish, and also if the stream fails or closes first (then nothing more can be written).
      return new Promise((resolve) => {
        const done = (): void => resolve();
        current.once('error', done);
        current.once('close', done);
        current.end(done);
      });
    },
  };
}

/**
 * A sink that adds `fields` (e.g. `{ generation: 3 }`) to every record before handing it to `sink`;
 * closing it closes `sink`.
 */
export function withAuditFields(sink: AuditSink, fields: Pick<AuditRecord, 'generation'>): AuditSink {
  return {
    write: (record) => sink.write({ ...record, ...fields }),
    close: () => sink.close(),
  };
}
