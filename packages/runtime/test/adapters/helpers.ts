import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PluginManifestSchema } from '@trellis/sdk/schema';
import type { Logger, PluginManifest, PluginManifestInput } from '@trellis/sdk';
import type { ImplementationCall } from '../../src/PluginImplementation.ts';

export const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');

/** A unique text to put in a child's argv, so tests can count exactly their own processes. */
export function newMarker(): string {
  return `trellis-test-${randomBytes(6).toString('hex')}`;
}

/**
 * Live (non-zombie) processes whose command line contains `marker`, not counting the isolation
 * wrapper (unshare) that the launcher puts in front of a child.
 */
export function countMarked(marker: string): number {
  const out = execFileSync('ps', ['-eo', 'stat=,args='], { encoding: 'utf8' });
  return out
    .split('\n')
    .filter(
      (line) =>
        line.includes(marker) && !line.trim().startsWith('Z') && !line.includes('ps -eo') && !/^\S+\s+\S*unshare\s/.test(line.trim()),
    ).length;
}

export async function waitFor(predicate: () => boolean, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > until) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

export function manifestOf(input: Partial<PluginManifestInput>): PluginManifest {
  return PluginManifestSchema.parse({ schema_version: 1, id: 'fault', name: 'Fault', version: '1.0.0', kind: 'toolset', ...input });
}

export interface LogEntry {
  readonly level: 'debug' | 'info' | 'warn' | 'error';
  readonly message: string;
  readonly fields: Readonly<Record<string, unknown>>;
}

export function recordingLogger(): Logger & { entries: LogEntry[] } {
  const entries: LogEntry[] = [];
  const at =
    (level: LogEntry['level']) =>
    (message: string, fields: Readonly<Record<string, unknown>> = {}) => {
      entries.push({ level, message, fields });
    };
  return { entries, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

let seq = 0;
/** A call with its own deadline (generous by default, so load never fails a call that should succeed); `controller` aborts it as a caller would. */
export function callOf(tool: string, input: unknown = {}, timeoutMs = 30_000, controller = new AbortController()): ImplementationCall {
  seq += 1;
  return { tool, input, callId: `c${seq}`, signal: controller.signal, deadlineAt: performance.now() + timeoutMs };
}
