import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { lstatSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isToolError } from '@trellis/sdk';
import type { ToolDefinition } from '@trellis/sdk';
import { editTool, globTool, listTool, readTool, searchTool, statTool, writeTool } from '../src/index.ts';
import type { FsSettings } from '../src/index.ts';
import { makeFsFixture } from './fsFixture.ts';
import type { FsFixture } from './fsFixture.ts';

/**
 * The swap race of issue 12: `ws/sub` (a real folder) and `ws/swap` (a symlink to the outside
 * folder) trade places atomically in a tight loop (renameat2 RENAME_EXCHANGE, in a child), while
 * a tool is called over and over on a path through `sub`. Whatever a call sees, it may only ever
 * touch the inside folder, and a call that loses the race must end as a clean PATH_NOT_ALLOWED.
 */

const SWAPPER = join(dirname(fileURLToPath(import.meta.url)), 'exchangeLoop.py');
/** Calls per tool, unless the time budget runs out first. */
const CALLS = 2000;
/** Time budget per tool; the loaded test machine may not reach CALLS in it. */
const BUDGET_MS = 20_000;
/** Fewest calls that make a run meaningful. */
const MIN_CALLS = 200;

const INSIDE = 'inside\n';
const OUTSIDE = 'OUTSIDE SECRET, longer than the inside file\n';

let fx: FsFixture;
let swapper: ChildProcess | undefined;

beforeEach(() => {
  fx = makeFsFixture();
  mkdirSync(join(fx.ws, 'sub'), { recursive: true });
  writeFileSync(join(fx.ws, 'sub', 'file.txt'), INSIDE);
  mkdirSync(fx.outside);
  writeFileSync(join(fx.outside, 'file.txt'), OUTSIDE);
  writeFileSync(join(fx.outside, 'outside-only.txt'), OUTSIDE);
  symlinkSync(fx.outside, join(fx.ws, 'swap'));
});

afterEach(() => {
  if (swapper !== undefined && swapper.exitCode === null && swapper.signalCode === null) swapper.kill('SIGKILL');
  swapper = undefined;
  fx.remove();
});

/** Starts the swapper and resolves once it has swapped once; `stop()` ends it and gives its swap count. */
async function startSwapper(): Promise<{ stop(): Promise<number> }> {
  const child = spawn(
    'nice',
    ['-n', '5', 'python3', SWAPPER, join(fx.ws, 'sub'), join(fx.ws, 'swap'), '100000000', String(BUDGET_MS / 1000 + 10)],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  swapper = child;
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const check = () => {
      if (out.startsWith('ready\n')) resolve();
      else if (child.exitCode !== null) reject(new Error(`the swapper (python3 ${SWAPPER}) ended early: ${err || out}`));
      else setTimeout(check, 10);
    };
    child.once('error', (error) => reject(new Error(`python3 is needed for the swap race test: ${error.message}`)));
    check();
  });
  return {
    async stop() {
      child.kill('SIGTERM');
      await exited;
      const lines = out.trim().split('\n');
      return Number(lines[lines.length - 1]);
    },
  };
}

interface RaceTally {
  calls: number;
  ok: number;
  /** Codes of clean refusals, with counts. */
  codes: Record<string, number>;
  /** Anything thrown that is not a ToolError (the runtime would report TOOL_THREW / CANONICALIZE_FAILED). */
  thrown: string[];
  /** Results that show the outside folder. */
  escapes: string[];
}

/** Calls a tool the way the runtime does (canonicalize, then run with the canonical input) until the count or budget is spent. */
async function race<I>(
  tool: ToolDefinition<I, unknown, FsSettings>,
  input: () => I,
  escaped: (value: unknown) => string | null,
  settings: Record<string, unknown> = {},
): Promise<RaceTally> {
  const ctx = fx.context(settings);
  const tally: RaceTally = { calls: 0, ok: 0, codes: {}, thrown: [], escapes: [] };
  const swap = await startSwapper();
  const started = Date.now();
  try {
    while (tally.calls < CALLS && Date.now() - started < BUDGET_MS) {
      tally.calls += 1;
      try {
        const canonical = tool.canonicalize === undefined ? { input: input() } : await tool.canonicalize(input(), ctx);
        const value = await tool.run(canonical.input as I, ctx);
        tally.ok += 1;
        const escape = escaped(value);
        if (escape !== null) tally.escapes.push(escape);
      } catch (error) {
        if (isToolError(error)) tally.codes[error.code] = (tally.codes[error.code] ?? 0) + 1;
        else tally.thrown.push(String(error));
      }
    }
  } finally {
    const swaps = await swap.stop();
    expect(swaps, 'the swapper must have been swapping during the calls').toBeGreaterThan(tally.calls);
  }
  expect(tally.calls).toBeGreaterThanOrEqual(MIN_CALLS);
  return tally;
}

/** What may be in the outside folder and what it holds, checked after every race. */
function expectOutsideUntouched(): void {
  expect(readdirSync(fx.outside).sort()).toEqual(['file.txt', 'outside-only.txt']);
  expect(readFileSync(join(fx.outside, 'file.txt'), 'utf8')).toBe(OUTSIDE);
}

/** No temp file left in the inside folder either (the swapper stops after an even number of swaps, so it is `sub` again). */
function expectNoStrayFiles(allowed: readonly string[]): void {
  expect(lstatSync(join(fx.ws, 'sub')).isDirectory()).toBe(true);
  expect(readdirSync(join(fx.ws, 'sub')).sort()).toEqual([...allowed].sort());
  expect(readdirSync(fx.ws).sort()).toEqual(['sub', 'swap']);
}

function expectClean(tally: RaceTally, codes: readonly string[]): void {
  expect(tally.escapes, `escapes in ${tally.calls} calls`).toEqual([]);
  expect(tally.thrown.slice(0, 5), `non-ToolError failures (TOOL_THREW) in ${tally.calls} calls`).toEqual([]);
  for (const code of Object.keys(tally.codes)) expect(codes, `refusal code ${code} (${tally.codes[code]} times)`).toContain(code);
  expectOutsideUntouched();
}

const RACE_TIMEOUT = BUDGET_MS + 30_000;

describe('a folder swapped for a symlink pointing out, concurrently: no escape, only clean refusals', () => {
  it('read never returns the outside file', { timeout: RACE_TIMEOUT }, async () => {
    const tally = await race(
      readTool,
      () => ({ path: 'sub/file.txt' }),
      (value) => {
        const content = (value as { content: string }).content;
        return content === 'inside' ? null : `read returned "${content}"`;
      },
    );
    expectClean(tally, ['PATH_NOT_ALLOWED']);
    expect(tally.ok).toBeGreaterThan(0);
  });

  it('stat never describes the outside file', { timeout: RACE_TIMEOUT }, async () => {
    const tally = await race(
      statTool,
      () => ({ path: 'sub/file.txt' }),
      (value) => {
        const out = value as { exists: boolean; size?: number };
        return out.exists && out.size === INSIDE.length ? null : `stat said ${JSON.stringify(out)}`;
      },
    );
    expectClean(tally, ['PATH_NOT_ALLOWED']);
  });

  it('list never shows the outside folder', { timeout: RACE_TIMEOUT }, async () => {
    const tally = await race(
      listTool,
      () => ({ path: 'sub' }),
      (value) => {
        const names = (value as { entries: { path: string }[] }).entries.map((e) => e.path);
        return names.some((name) => name.includes('outside-only')) ? `list showed ${names.join(', ')}` : null;
      },
    );
    expectClean(tally, ['PATH_NOT_ALLOWED']);
  });

  it('list of the root, two levels deep, never enters the outside folder', { timeout: RACE_TIMEOUT }, async () => {
    const tally = await race(
      listTool,
      () => ({ path: '.', depth: 2 }),
      (value) => {
        const names = (value as { entries: { path: string }[] }).entries.map((e) => e.path);
        return names.some((name) => name.includes('outside-only')) ? `list showed ${names.join(', ')}` : null;
      },
    );
    expectClean(tally, ['PATH_NOT_ALLOWED']);
  });

  it('search never matches a line of the outside file', { timeout: RACE_TIMEOUT }, async () => {
    const tally = await race(
      searchTool,
      () => ({ pattern: 'SECRET' }),
      (value) => {
        const matches = (value as { matches: unknown[] }).matches;
        return matches.length === 0 ? null : `search found ${JSON.stringify(matches)}`;
      },
    );
    expectClean(tally, ['PATH_NOT_ALLOWED']);
  });

  it('search of one file through the swapped folder never matches the outside file', { timeout: RACE_TIMEOUT }, async () => {
    const tally = await race(
      searchTool,
      () => ({ pattern: 'SECRET', path: 'sub/file.txt' }),
      (value) => {
        const matches = (value as { matches: unknown[] }).matches;
        return matches.length === 0 ? null : `search found ${JSON.stringify(matches)}`;
      },
    );
    expectClean(tally, ['PATH_NOT_ALLOWED']);
  });

  it('glob never names a file of the outside folder', { timeout: RACE_TIMEOUT }, async () => {
    const tally = await race(
      globTool,
      () => ({ pattern: '**/*.txt' }),
      (value) => {
        const files = (value as { files: string[] }).files;
        return files.some((name) => name.includes('outside-only')) ? `glob named ${files.join(', ')}` : null;
      },
    );
    expectClean(tally, ['PATH_NOT_ALLOWED']);
  });

  it('write never writes outside and leaves no temp file on either side', { timeout: RACE_TIMEOUT }, async () => {
    let n = 0;
    const tally = await race(
      writeTool,
      () => ({ path: 'sub/file.txt', content: `written ${(n += 1)}\n` }),
      () => null,
      { allow_write: true },
    );
    expectClean(tally, ['PATH_NOT_ALLOWED']);
    expect(tally.ok).toBeGreaterThan(0);
    expectNoStrayFiles(['file.txt']);
  });

  it('write with create_parents never creates a folder or file outside', { timeout: RACE_TIMEOUT }, async () => {
    let n = 0;
    const tally = await race(
      writeTool,
      () => ({ path: `sub/made/${(n += 1) % 3}/new.txt`, content: 'x', create_parents: true }),
      () => null,
      {
        allow_write: true,
      },
    );
    expectClean(tally, ['PATH_NOT_ALLOWED']);
    expect(tally.ok).toBeGreaterThan(0);
    expectNoStrayFiles(['file.txt', 'made']);
  });

  it('edit never changes the outside file', { timeout: RACE_TIMEOUT }, async () => {
    // Only the outside file holds SECRET, so every successful edit is an escape.
    const tally = await race(
      editTool,
      () => ({ path: 'sub/file.txt', old: 'SECRET', new: 'PWNED' }),
      (value) => `edit changed ${JSON.stringify(value)}`,
      {
        allow_write: true,
      },
    );
    expectClean(tally, ['PATH_NOT_ALLOWED', 'INVALID_ARGUMENT']);
    expectNoStrayFiles(['file.txt']);
  });
});
