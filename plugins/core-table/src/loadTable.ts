import type { ToolContext } from '@trellis/sdk';
import { readTableFile, resolveInsideRoot, resolveRoot } from './readTableFile.ts';
import { parseTable } from './parseTable.ts';
import type { Table, TableFormat } from './parseTable.ts';
import type { TableSettings } from './TableSettingsSchema.ts';

/** Reads and parses the table a tool call names, under the plugin's settings. */
export async function loadTable(
  source: { path: string; format?: TableFormat | undefined; has_header?: boolean | undefined },
  ctx: ToolContext<TableSettings>,
): Promise<{ table: Table; displayPath: string }> {
  const rootReal = await resolveRoot({ workspaceRoot: ctx.workspace.root, root: ctx.config.root });
  const file = await readTableFile({ rootReal, path: source.path, maxBytes: ctx.config.max_bytes });
  const table = await parseTable({
    bytes: file.bytes,
    displayPath: file.displayPath,
    format: source.format,
    hasHeader: source.has_header,
    maxRows: ctx.config.max_rows,
    maxColumns: ctx.config.max_columns,
    signal: ctx.signal,
  });
  return { table, displayPath: file.displayPath };
}

/** The canonical form of a path argument: resolved inside the root, shown relative to it. */
export async function canonicalPath(path: string, ctx: ToolContext<TableSettings>): Promise<string> {
  const rootReal = await resolveRoot({ workspaceRoot: ctx.workspace.root, root: ctx.config.root });
  return (await resolveInsideRoot({ rootReal, path })).displayPath;
}
