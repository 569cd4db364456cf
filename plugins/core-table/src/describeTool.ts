import { z } from 'zod';
import { defineTool } from '@trellis/sdk';
import { describeTable } from './describeTable.ts';
import type { ColumnStats } from './describeTable.ts';
import { loadTable } from './loadTable.ts';
import { canonicalizeSource, headerInfo, LIMITS_NOTE, TABLE_TOOL_CONTRACT } from './tableToolShared.ts';
import type { TableHeaderInfo } from './tableToolShared.ts';
import { tableSourceFields } from './tableSourceFields.ts';
import type { TableSettings } from './TableSettingsSchema.ts';

/** Input of `core-table.describe`. */
export const DescribeInputSchema = z.object({ ...tableSourceFields }).strict();

/** Input of `core-table.describe`. */
export type DescribeInput = z.infer<typeof DescribeInputSchema>;

/** What `core-table.describe` returns. */
export interface DescribeResult extends TableHeaderInfo {
  readonly columns: readonly ColumnStats[];
}

/** `core-table.describe`: columns, types, nulls and basic statistics. */
export const describeTool = defineTool<DescribeInput, DescribeResult, TableSettings>({
  name: 'describe',
  description:
    'Summarize a CSV, TSV, JSON or JSON Lines table: row count and, per column, its type (number, boolean, date, ' +
    'string, null, json, mixed), empty-cell count, distinct values (counted up to 1000), min/max (numbers, dates, ' +
    'text), mean (numbers), text lengths and the most frequent values. Use it first on an unfamiliar table to learn ' +
    `column names and types before core-table.query. ${LIMITS_NOTE}`,
  input: DescribeInputSchema,
  contract: TABLE_TOOL_CONTRACT,
  tags: ['table', 'csv', 'json', 'data', 'statistics'],
  examples: [{ description: 'Columns and statistics of a CSV file', input: { path: 'data/sales.csv' } }],
  canonicalize: canonicalizeSource,
  async run(input, ctx) {
    const loaded = await loadTable(input, ctx);
    return { ...headerInfo(loaded), columns: describeTable(loaded.table) };
  },
});
