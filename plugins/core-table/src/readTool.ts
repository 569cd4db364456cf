import { z } from 'zod';
import { defineTool } from '@trellis/sdk';
import type { Cell } from './inferValue.ts';
import { loadTable } from './loadTable.ts';
import { completeRow } from './parseTable.ts';
import type { Column } from './parseTable.ts';
import { MAX_QUERY_LIMIT } from './QueryInputSchema.ts';
import { canonicalizeSource, headerInfo, LIMITS_NOTE, TABLE_TOOL_CONTRACT } from './tableToolShared.ts';
import type { TableHeaderInfo } from './tableToolShared.ts';
import { tableSourceFields } from './tableSourceFields.ts';
import type { TableSettings } from './TableSettingsSchema.ts';

/** Rows `read` returns when no limit is given. */
export const DEFAULT_READ_LIMIT = 50;

/** Input of `core-table.read`. */
export const ReadInputSchema = z
  .object({
    ...tableSourceFields,
    offset: z.number().int().min(0).optional().describe('Data rows to skip first (default 0), for paging through a table.'),
    limit: z
      .number()
      .int()
      .min(1)
      .max(MAX_QUERY_LIMIT)
      .optional()
      .describe(`Most rows returned (default ${DEFAULT_READ_LIMIT}, at most ${MAX_QUERY_LIMIT}).`),
  })
  .strict();

/** Input of `core-table.read`. */
export type ReadInput = z.infer<typeof ReadInputSchema>;

/** What `core-table.read` returns. */
export interface ReadResult extends TableHeaderInfo {
  readonly columns: readonly Column[];
  readonly rows: ReadonlyArray<Readonly<Record<string, Cell>>>;
  readonly offset: number;
  readonly returned: number;
  /** True when rows after the returned ones exist (page on with offset). */
  readonly truncated: boolean;
}

/** `core-table.read`: the first rows of a table, typed. */
export const readTool = defineTool<ReadInput, ReadResult, TableSettings>({
  name: 'read',
  description:
    'Read rows of a CSV, TSV, JSON (array of objects) or JSON Lines file as typed records, with the column names and ' +
    'types (number, boolean, date, string, null). Use it to look at a table; use core-table.query to filter, sort or ' +
    'aggregate, and core-table.describe for per-column statistics. Returns at most 50 rows by default (up to 1000; page ' +
    `with offset). ${LIMITS_NOTE}`,
  input: ReadInputSchema,
  contract: TABLE_TOOL_CONTRACT,
  tags: ['table', 'csv', 'json', 'data'],
  examples: [
    { description: 'First rows of a CSV file', input: { path: 'data/sales.csv' } },
    { description: 'Rows 100–199 of a headerless TSV', input: { path: 'export.tsv', has_header: false, offset: 100, limit: 100 } },
  ],
  canonicalize: canonicalizeSource,
  async run(input, ctx) {
    const loaded = await loadTable(input, ctx);
    const offset = input.offset ?? 0;
    const rows = loaded.table.rows
      .slice(offset, offset + (input.limit ?? DEFAULT_READ_LIMIT))
      .map((row) => completeRow(row, loaded.table.columns));
    return {
      ...headerInfo(loaded),
      columns: loaded.table.columns,
      rows,
      offset,
      returned: rows.length,
      truncated: offset + rows.length < loaded.table.rows.length,
    };
  },
});
