import { definePlugin } from '@trellis/sdk';
import { describeTool, DescribeInputSchema } from './describeTool.ts';
import { queryTool } from './queryTool.ts';
import { readTool, ReadInputSchema } from './readTool.ts';
import { QueryInputSchema } from './QueryInputSchema.ts';
import { TableSettingsSchema } from './TableSettingsSchema.ts';
import type { TableSettings } from './TableSettingsSchema.ts';

/** The core-table plugin: `core-table.read`, `core-table.query`, `core-table.describe`. */
export const plugin = definePlugin<TableSettings>({
  manifest: { id: 'core-table' },
  settings: { key: 'table', schema: TableSettingsSchema },
  tools: [readTool, queryTool, describeTool],
});

export { TableSettingsSchema, ReadInputSchema, QueryInputSchema, DescribeInputSchema, readTool, queryTool, describeTool };
export { parseTable } from './parseTable.ts';
export { queryTable } from './queryTable.ts';
export { describeTable } from './describeTable.ts';
export type { TableSettings };
export type { Table, Column, RaggedRow, TableFormat } from './parseTable.ts';
export type { QueryInput, Filter, Aggregate } from './QueryInputSchema.ts';
export type { QueryResult } from './queryTable.ts';
export type { ColumnStats } from './describeTable.ts';
export type { ColumnType, Cell } from './inferValue.ts';
export type { ReadInput, ReadResult } from './readTool.ts';
export type { DescribeInput, DescribeResult } from './describeTool.ts';
export type { QueryToolResult } from './queryTool.ts';
export type { TableHeaderInfo } from './tableToolShared.ts';
