import type { ToolContract, ToolContext } from '@trellis/sdk';
import { canonicalPath } from './loadTable.ts';
import type { loadTable } from './loadTable.ts';
import type { RaggedRow, TableFormat } from './parseTable.ts';
import type { TableSettings } from './TableSettingsSchema.ts';

/** Ragged rows listed in a result (all are counted). */
const RAGGED_SHOWN = 20;

/**
 * The contract every core-table tool shares: read-only, inside the root. Inline: CSV parsing
 * yields to the event loop and stops at the deadline's abort.
 */
export const TABLE_TOOL_CONTRACT: Partial<ToolContract> = {
  sideEffects: false,
  idempotent: true,
  capabilities: ['fs.read'],
  sandbox: 'read-only-fs',
  deadlineMs: 30_000,
  // Parsing, filtering and describing grow with the file: off the host thread, killed at the deadline.
  isolation: 'worker',
};

/** The limits sentence every tool description ends with. */
export const LIMITS_NOTE =
  'Files must lie inside the table root (the workspace by default), be at most 20 MiB, 100 000 rows and 1000 columns by default ' +
  '([runtime.tools.table] max_bytes, max_rows, max_columns).';

/** What every core-table result says about the file. */
export interface TableHeaderInfo {
  /** The path relative to the table root. */
  readonly path: string;
  readonly format: TableFormat;
  readonly has_header: boolean;
  /** How has_header was decided: given by the caller, detected, or not applicable (JSON). */
  readonly header: 'given' | 'detected' | 'not applicable';
  /** Data rows in the file. */
  readonly total_rows: number;
  /** Rows whose field count differs from the header's (first 20; `ragged_row_count` counts all). */
  readonly ragged_rows: readonly RaggedRow[];
  readonly ragged_row_count: number;
  readonly warnings: readonly string[];
}

/** The file facts every result carries. */
export function headerInfo(loaded: Awaited<ReturnType<typeof loadTable>>): TableHeaderInfo {
  const { table, displayPath } = loaded;
  return {
    path: displayPath,
    format: table.format,
    has_header: table.hasHeader,
    header: table.headerSource,
    total_rows: table.rows.length,
    ragged_rows: table.raggedRows.slice(0, RAGGED_SHOWN),
    ragged_row_count: table.raggedRows.length,
    warnings: table.warnings,
  };
}

/** Canonicalization shared by the tools: the path resolved inside the root, shown relative to it. */
export async function canonicalizeSource<T extends { path: string }>(input: T, ctx: ToolContext<TableSettings>) {
  const path = await canonicalPath(input.path, ctx);
  return { input: { ...input, path }, summary: { path } };
}
