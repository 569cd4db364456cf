import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ToolContext } from '@trellis/sdk';
import { testToolContext, toolErrorOf } from '@trellis/testing';
import { FsSettingsSchema } from '../src/index.ts';
import type { FsSettings } from '../src/index.ts';

/** A temp folder holding `ws/` (the workspace) and `outside/` (what must stay unreachable). */
export interface FsFixture {
  readonly base: string;
  readonly ws: string;
  readonly outside: string;
  /** A ToolContext whose settings are `FsSettingsSchema.parse(patch)`, as the registry would give. */
  context(patch?: Record<string, unknown>): ToolContext<FsSettings>;
  /** Replaces the temp base in a message with `<tmp>`. */
  normalize(text: string): string;
  remove(): void;
}

export function makeFsFixture(): FsFixture {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'trellis-core-fs-')));
  const ws = join(base, 'ws');
  const outside = join(base, 'outside');
  return {
    base,
    ws,
    outside,
    context: (patch = {}) => testToolContext({ config: FsSettingsSchema.parse(patch), tool: 'core-fs.test', workspace: ws }),
    normalize: (text) => text.split(base).join('<tmp>'),
    remove: () => rmSync(base, { recursive: true, force: true }),
  };
}

/** Awaits a call that must fail with a ToolError and returns its code and (normalized) message. */
export function failureOf(fixture: FsFixture, call: () => unknown): Promise<{ code: string; message: string }> {
  return toolErrorOf(call, fixture.normalize);
}
