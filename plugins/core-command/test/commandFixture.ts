import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ToolContext } from '@trellis/sdk';
import { testToolContext, toolErrorOf } from '@trellis/testing';
import { CommandSettingsSchema } from '../src/index.ts';
import type { CommandSettings } from '../src/index.ts';

/** A temp workspace and a way to build the ToolContext the runtime would pass. */
export interface CommandFixture {
  readonly base: string;
  readonly ws: string;
  context(
    patch?: Record<string, unknown>,
    options?: { env?: Record<string, string | undefined>; signal?: AbortSignal },
  ): ToolContext<CommandSettings>;
  normalize(text: string): string;
  remove(): void;
}

export function makeCommandFixture(): CommandFixture {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'trellis-core-command-')));
  const ws = join(base, 'ws');
  mkdirSync(ws);
  return {
    base,
    ws,
    context: (patch = {}, options = {}) =>
      testToolContext({
        config: CommandSettingsSchema.parse(patch),
        tool: 'core-command.run',
        workspace: ws,
        env: options.env ?? { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: '/home/tester', LANG: 'C.UTF-8' },
        ...(options.signal ? { signal: options.signal } : {}),
      }),
    normalize: (text) => text.split(base).join('<tmp>'),
    remove: () => rmSync(base, { recursive: true, force: true }),
  };
}

/** Awaits a call that must fail with a ToolError; returns its code and normalized message. */
export function failureOf(fixture: CommandFixture, call: () => unknown): Promise<{ code: string; message: string }> {
  return toolErrorOf(call, fixture.normalize);
}

/** How many live processes have exactly this command line. */
export function countProcesses(commandLine: string): number {
  const out = execFileSync('ps', ['-eo', 'stat=,args='], { encoding: 'utf8' });
  return (
    out
      .split('\n')
      .map((line) => line.trim())
      // Zombies (state Z) are already dead; only count processes that still run.
      .filter((line) => !line.startsWith('Z') && line.slice(line.indexOf(' ') + 1).trim() === commandLine).length
  );
}
