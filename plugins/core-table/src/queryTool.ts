import { defineTool } from '@trellis/sdk';
import { loadTable } from './loadTable.ts';
import { QueryInputSchema } from './QueryInputSchema.ts';
import type { QueryInput } from './QueryInputSchema.ts';
import { queryTable } from './queryTable.ts';
import type { QueryResult } from './queryTable.ts';
import { canonicalizeSource, headerInfo, LIMITS_NOTE, TABLE_TOOL_CONTRACT } from './tableToolShared.ts';
import type { TableHeaderInfo } from './tableToolShared.ts';
import type { TableSettings } from './TableSettingsSchema.ts';

/** What `core-table.query` returns. */
export type QueryToolResult = TableHeaderInfo & QueryResult;

/** `core-table.query`: filter, group, aggregate, sort, select. */
export const queryTool = defineTool<QueryInput, QueryToolResult, TableSettings>({
  name: 'query',
  description:
    'Filter, group, aggregate, sort and project a CSV, TSV, JSON or JSON Lines table, without writing code. Steps, in ' +
    'order: where (structured conditions {column, op, value}, all must hold; ops eq, ne, lt, le, gt, ge, contains, in, ' +
    'is_null) → group_by + aggregates (count, sum, mean, min, max) → sort → limit → select. Values must match the ' +
    'column type (numbers as numbers, dates as ISO strings); call core-table.describe first if unsure of the columns. ' +
    `Returns at most 100 rows by default (up to 1000); row_count tells how many there were. ${LIMITS_NOTE}`,
  input: QueryInputSchema,
  contract: TABLE_TOOL_CONTRACT,
  tags: ['table', 'csv', 'json', 'data', 'filter', 'aggregate'],
  examples: [
    {
      description: 'Orders over 100 in 2024, largest first',
      input: {
        path: 'orders.csv',
        where: [
          { column: 'amount', op: 'gt', value: 100 },
          { column: 'date', op: 'ge', value: '2024-01-01' },
        ],
        sort: [{ column: 'amount', direction: 'desc' }],
        limit: 20,
      },
    },
    {
      description: 'Revenue and order count per region',
      input: {
        path: 'orders.csv',
        group_by: ['region'],
        aggregates: [{ op: 'count' }, { op: 'sum', column: 'amount', as: 'revenue' }],
        sort: [{ column: 'revenue', direction: 'desc' }],
      },
    },
  ],
  canonicalize: canonicalizeSource,
  async run(input, ctx) {
    const loaded = await loadTable(input, ctx);
    return { ...headerInfo(loaded), ...queryTable(loaded.table, input, loaded.displayPath) };
  },
});
