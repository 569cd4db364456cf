// What bench/mcp and bench/mcp-bridge share: the SDK server program both measure against, a
// throwaway home and workspace (the user's own config and skills stay out of the measurement),
// and the percentile summary both report.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

/** The official SDK v2's minimal stdio server (low-level Server) with one tool, {@link SDK_SERVER_TOOL}. */
export const SDK_SERVER = join(here, 'mcp-sdk-server.mjs');
/** Its tool: answers with its arguments as text and as structuredContent. */
export const SDK_SERVER_TOOL = 'noop';
/** The built `trellis` binary. */
export const TRELLIS_CLI = join(here, '..', 'apps', 'trellis', 'dist', 'cli.cjs');

/** A throwaway home, workspace and state folder with a minimal environment; `remove()` deletes them. */
export interface BenchSandbox {
  readonly dir: string;
  readonly home: string;
  readonly workspace: string;
  readonly state: string;
  readonly env: Record<string, string>;
  remove(): void;
}

export function makeSandbox(prefix = 'trellis-bench-mcp-'): BenchSandbox {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const home = join(dir, 'home');
  const workspace = join(dir, 'workspace');
  const state = join(dir, 'state');
  for (const folder of [home, workspace, state]) mkdirSync(folder);
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, XDG_CONFIG_HOME: join(home, '.config'), LANG: 'C.UTF-8' };
  return { dir, home, workspace, state, env, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** p50 and p99 of samples in ms. */
export function summary(samples: readonly number[]): { p50: number; p99: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return { p50: at(0.5), p99: at(0.99) };
}

/** A number rounded to 3 decimals, for the BENCH line. */
export const round3 = (n: number): number => Math.round(n * 1000) / 1000;

/** Progress on stderr (stdout carries only the BENCH line). */
export const log = (text: string): void => void process.stderr.write(`${text}\n`);
