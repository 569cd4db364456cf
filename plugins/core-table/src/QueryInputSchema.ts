import { z } from 'zod';
import { tableSourceFields } from './tableSourceFields.ts';

/** Most rows `query` returns in one call. */
export const MAX_QUERY_LIMIT = 1000;

const ColumnNameSchema = z.string().min(1).max(256).describe('A column name, exactly as in the table (see core-table.describe).');
const ScalarSchema = z.union([z.string().max(10_000), z.number(), z.boolean()]);

/** One condition on one column. Conditions in `where` must all hold (AND). */
export const FilterSchema = z.discriminatedUnion('op', [
  z
    .object({
      column: ColumnNameSchema,
      op: z.enum(['eq', 'ne']).describe('eq: equal; ne: not equal (null cells never match; use is_null).'),
      value: ScalarSchema.describe(
        'Same kind as the column: a number for number columns, true/false for boolean ones, an ISO date string for dates, a string for text.',
      ),
    })
    .strict(),
  z
    .object({
      column: ColumnNameSchema,
      op: z
        .enum(['lt', 'le', 'gt', 'ge'])
        .describe('lt <, le <=, gt >, ge >=. Numbers compare numerically, dates chronologically, text by code point.'),
      value: z
        .union([z.string().max(10_000), z.number()])
        .describe('A number for number columns, an ISO date such as "2024-01-31" for date columns, a string for text columns.'),
    })
    .strict(),
  z
    .object({
      column: ColumnNameSchema,
      op: z.literal('contains').describe('The cell, as text, contains value (case-insensitive).'),
      value: z.string().min(1).max(10_000),
    })
    .strict(),
  z
    .object({
      column: ColumnNameSchema,
      op: z.literal('in').describe('The cell equals one of the values.'),
      value: z.array(ScalarSchema).min(1).max(1000),
    })
    .strict(),
  z
    .object({
      column: ColumnNameSchema,
      op: z.literal('is_null').describe('The cell is empty (null). With value false: the cell is not empty.'),
      value: z.boolean().optional().describe('true (default): keep empty cells; false: keep non-empty cells.'),
    })
    .strict(),
]);

/** One aggregate computed per group (or over all matching rows without group_by). */
export const AggregateSchema = z.discriminatedUnion('op', [
  z
    .object({
      op: z.literal('count').describe('Number of rows; with a column, number of non-empty cells in it.'),
      column: ColumnNameSchema.optional(),
      as: z.string().min(1).max(256).optional().describe('Output column name. Default "count" (or "count_<column>").'),
    })
    .strict(),
  z
    .object({
      op: z
        .enum(['sum', 'mean', 'min', 'max'])
        .describe('sum and mean need a number column; min and max work on numbers, dates and text. Empty cells are skipped.'),
      column: ColumnNameSchema,
      as: z.string().min(1).max(256).optional().describe('Output column name. Default "<op>_<column>", e.g. "sum_amount".'),
    })
    .strict(),
]);

/** One sort key. */
export const SortKeySchema = z
  .object({
    column: ColumnNameSchema.describe(
      'A column of the result: a table column, or with group_by/aggregates a group column or aggregate name.',
    ),
    direction: z.enum(['asc', 'desc']).optional().describe('Default asc. Empty cells sort last either way.'),
  })
  .strict();

/** Input of `core-table.query`. */
export const QueryInputSchema = z
  .object({
    ...tableSourceFields,
    where: z.array(FilterSchema).max(50).optional().describe('Conditions that must all hold (AND). Omit to keep every row.'),
    group_by: z
      .array(ColumnNameSchema)
      .min(1)
      .max(10)
      .optional()
      .describe(
        'Group rows by these columns; the result has one row per group with the group columns and the aggregates (count by default).',
      ),
    aggregates: z
      .array(AggregateSchema)
      .min(1)
      .max(20)
      .optional()
      .describe('Aggregates per group, or over all matching rows when group_by is omitted.'),
    sort: z.array(SortKeySchema).min(1).max(10).optional().describe('Sort keys, most significant first. Applied before limit.'),
    select: z.array(ColumnNameSchema).min(1).max(200).optional().describe('Columns of the result to return, in this order. Omit for all.'),
    limit: z
      .number()
      .int()
      .min(1)
      .max(MAX_QUERY_LIMIT)
      .optional()
      .describe(`Most rows returned (default 100, at most ${MAX_QUERY_LIMIT}); row_count still tells how many matched.`),
  })
  .strict();

/** Input of `core-table.query`. */
export type QueryInput = z.infer<typeof QueryInputSchema>;
/** One filter. */
export type Filter = z.infer<typeof FilterSchema>;
/** One aggregate. */
export type Aggregate = z.infer<typeof AggregateSchema>;
