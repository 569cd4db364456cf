import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { testToolContext } from '@trellis/testing';
import type { ToolContext } from '@trellis/sdk';
import { TableSettingsSchema } from '../src/TableSettingsSchema.ts';
import type { TableSettings } from '../src/TableSettingsSchema.ts';

/** A ToolContext as the runtime would build it, with settings parsed from a `[runtime.tools.table]` patch. */
export function makeContext(options: { workspace: string; settings?: Record<string, unknown> }): ToolContext<TableSettings> {
  return testToolContext({
    config: TableSettingsSchema.parse(options.settings ?? {}),
    tool: 'core-table.read',
    workspace: options.workspace,
  });
}

/** A temp folder (real path) holding `files`; `cleanup` removes it. */
export function makeTree(files: Record<string, string | Buffer>): { dir: string; cleanup: () => void } {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'trellis-table-')));
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), content);
  }
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
