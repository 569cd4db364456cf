import { describe, expect, it } from 'vitest';
import { parseTable } from '../src/parseTable.ts';
import { QueryInputSchema } from '../src/QueryInputSchema.ts';
import { queryTable } from '../src/queryTable.ts';
import { describeTable } from '../src/describeTable.ts';
import { agreement } from '@trellis/testing';

const CSV = [
  'region,product,amount,date,paid',
  'north,apple,120.5,2024-01-05,true',
  'south,pear,80,2024-02-10,false',
  'north,pear,,2024-02-11,true',
  'east,apple,300,2023-12-31,true',
  'south,apple,45.25,2024-03-01,',
  'north,Plum,10,2024-03-02,false',
].join('\n');

const table = await parseTable({ bytes: Buffer.from(CSV), displayPath: 'orders.csv', maxRows: 100, maxColumns: 1000 });

/** Parses the query with the tool's zod schema (as the runtime would validate it), then runs it. */
function run(query: Record<string, unknown>) {
  const parsed = QueryInputSchema.parse({ path: 'orders.csv', ...query });
  const result = queryTable(table, parsed, 'orders.csv');
  return { ...result, rows: result.rows.map((r) => ({ ...r })) };
}

function fails(query: Record<string, unknown>): string {
  try {
    run(query);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected the query to fail');
}

describe('query schema', () => {
  it('accepts structured filters and refuses code strings and loose shapes', () => {
    const ok = (q: unknown) => QueryInputSchema.safeParse({ path: 'a.csv', ...(q as object) }).success;
    expect(ok({ where: [{ column: 'a', op: 'in', value: [1, 'x', true] }] })).toBe(true);
    expect(ok({ where: [{ column: 'a', op: 'is_null' }] })).toBe(true);
    expect(ok({ where: 'amount > 100' })).toBe(false);
    expect(ok({ where: [{ column: 'a', op: 'gt', value: true }] })).toBe(false);
    expect(ok({ where: [{ column: 'a', op: 'between', value: [1, 2] }] })).toBe(false);
    expect(ok({ where: [{ column: 'a', op: 'in', value: [] }] })).toBe(false);
    expect(ok({ where: [{ column: 'a', op: 'eq', value: 1, extra: 1 }] })).toBe(false);
    expect(ok({ where: [{ column: 'a', op: 'eq', value: null }] })).toBe(false);
    expect(ok({ aggregates: [{ op: 'sum' }] })).toBe(false);
    expect(ok({ aggregates: [{ op: 'median', column: 'a' }] })).toBe(false);
    expect(ok({ sort: [{ column: 'a', direction: 'down' }] })).toBe(false);
    expect(ok({ limit: 1001 })).toBe(false);
    expect(ok({ limit: 0 })).toBe(false);
    expect(ok({ sql: 'select 1' })).toBe(false);
  });

  it('is validated the same way by the runtime (JSON Schema + ajv)', () => {
    const inputs = [
      {
        path: 'a.csv',
        where: [{ column: 'a', op: 'in', value: [1, 'x', true] }],
        group_by: ['b'],
        aggregates: [{ op: 'count' }, { op: 'sum', column: 'c', as: 's' }],
        sort: [{ column: 's', direction: 'desc' }],
        select: ['s'],
        limit: 5,
      },
      { path: 'a.csv', where: [{ column: 'a', op: 'is_null' }] },
      { path: 'a.csv', where: [{ column: 'a', op: 'gt', value: true }] },
      { path: 'a.csv', where: [{ column: 'a', op: 'contains', value: 3 }] },
      { path: 'a.csv', where: [{ column: 'a', op: 'eq', value: 1, extra: 1 }] },
      { path: 'a.csv', aggregates: [{ op: 'sum' }] },
      { path: 'a.csv', aggregates: [{ op: 'count', column: 'x', extra: true }] },
      { path: 'a.csv', where: 'a > 1' },
      { path: '' },
    ];
    expect(agreement(QueryInputSchema, inputs)).toEqual([
      [true, true],
      [true, true],
      [false, false],
      [false, false],
      [false, false],
      [false, false],
      [false, false],
      [false, false],
      [false, false],
    ]);
  });
});

describe('queryTable', () => {
  it('filters with AND, sorts with empty cells last, selects and limits', () => {
    expect(
      run({
        where: [
          { column: 'date', op: 'ge', value: '2024-01-01' },
          { column: 'product', op: 'ne', value: 'pear' },
        ],
        sort: [{ column: 'amount', direction: 'desc' }],
        select: ['product', 'amount'],
        limit: 2,
      }),
    ).toEqual({
      columns: [
        { name: 'product', type: 'string' },
        { name: 'amount', type: 'number' },
      ],
      rows: [
        { product: 'apple', amount: 120.5 },
        { product: 'apple', amount: 45.25 },
      ],
      matched_rows: 3,
      row_count: 3,
      returned: 2,
      truncated: true,
    });
    expect(run({ sort: [{ column: 'amount' }], select: ['amount'] }).rows.map((r) => r.amount)).toEqual([10, 45.25, 80, 120.5, 300, null]);
    expect(run({ sort: [{ column: 'amount', direction: 'desc' }], select: ['amount'] }).rows.map((r) => r.amount)).toEqual([
      300,
      120.5,
      80,
      45.25,
      10,
      null,
    ]);
  });

  it('supports every operator', () => {
    const amounts = (where: unknown) => run({ where: [where], select: ['amount'] }).rows.map((r) => r.amount);
    expect(amounts({ column: 'amount', op: 'eq', value: 80 })).toEqual([80]);
    expect(amounts({ column: 'amount', op: 'ne', value: 80 })).toEqual([120.5, 300, 45.25, 10]);
    expect(amounts({ column: 'amount', op: 'lt', value: 80 })).toEqual([45.25, 10]);
    expect(amounts({ column: 'amount', op: 'le', value: 80 })).toEqual([80, 45.25, 10]);
    expect(amounts({ column: 'amount', op: 'gt', value: 120.5 })).toEqual([300]);
    expect(amounts({ column: 'amount', op: 'ge', value: 120.5 })).toEqual([120.5, 300]);
    expect(amounts({ column: 'amount', op: 'in', value: [10, 300, 7] })).toEqual([300, 10]);
    expect(amounts({ column: 'amount', op: 'is_null' })).toEqual([null]);
    expect(amounts({ column: 'paid', op: 'is_null', value: false })).toEqual([120.5, 80, null, 300, 10]);
    expect(amounts({ column: 'product', op: 'contains', value: 'PL' })).toEqual([120.5, 300, 45.25, 10]);
    expect(amounts({ column: 'paid', op: 'eq', value: false })).toEqual([80, 10]);
    expect(amounts({ column: 'date', op: 'lt', value: '2024-01-01T00:00:00Z' })).toEqual([300]);
    expect(amounts({ column: 'region', op: 'gt', value: 'north' })).toEqual([80, 45.25]);
  });

  it('groups and aggregates, with sort on an aggregate', () => {
    expect(
      run({
        group_by: ['region'],
        aggregates: [
          { op: 'count' },
          { op: 'count', column: 'amount' },
          { op: 'sum', column: 'amount', as: 'total' },
          { op: 'mean', column: 'amount' },
          { op: 'min', column: 'date' },
          { op: 'max', column: 'product' },
        ],
        sort: [{ column: 'total', direction: 'desc' }],
      }),
    ).toEqual({
      columns: [
        { name: 'region', type: 'string' },
        { name: 'count', type: 'number' },
        { name: 'count_amount', type: 'number' },
        { name: 'total', type: 'number' },
        { name: 'mean_amount', type: 'number' },
        { name: 'min_date', type: 'date' },
        { name: 'max_product', type: 'string' },
      ],
      rows: [
        { region: 'east', count: 1, count_amount: 1, total: 300, mean_amount: 300, min_date: '2023-12-31', max_product: 'apple' },
        { region: 'north', count: 3, count_amount: 2, total: 130.5, mean_amount: 65.25, min_date: '2024-01-05', max_product: 'pear' },
        { region: 'south', count: 2, count_amount: 2, total: 125.25, mean_amount: 62.625, min_date: '2024-02-10', max_product: 'pear' },
      ],
      matched_rows: 6,
      row_count: 3,
      returned: 3,
      truncated: false,
    });
  });

  it('counts by group by default and aggregates without groups', () => {
    expect(run({ group_by: ['paid'], sort: [{ column: 'paid' }] }).rows).toEqual([
      { paid: false, count: 2 },
      { paid: true, count: 3 },
      { paid: null, count: 1 },
    ]);
    expect(run({ aggregates: [{ op: 'sum', column: 'amount' }, { op: 'count' }] }).rows).toEqual([{ sum_amount: 555.75, count: 6 }]);
    expect(
      run({ where: [{ column: 'amount', op: 'gt', value: 1000 }], aggregates: [{ op: 'count' }, { op: 'max', column: 'amount' }] }).rows,
    ).toEqual([{ count: 0, max_amount: null }]);
  });

  it('names the argument, the column and the fix', () => {
    expect(fails({ where: [{ column: 'amout', op: 'gt', value: 1 }] })).toBe(
      'where[0].column: no column "amout" in "orders.csv"; columns are: region, product, amount, date, paid. Did you mean "amount"?',
    );
    expect(fails({ where: [{ column: 'amount', op: 'gt', value: '100' }] })).toBe(
      'where[0].value: column "amount" holds numbers; give a number such as 42 (not a string); got "100" for op "gt".',
    );
    expect(fails({ where: [{ column: 'date', op: 'ge', value: 'last week' }] })).toBe(
      'where[0].value: column "date" holds ISO dates; give a date string such as "2024-01-31"; got "last week" for op "ge".',
    );
    expect(fails({ where: [{ column: 'paid', op: 'gt', value: 'x' }] })).toBe(
      'where[0].value: column "paid" holds booleans; give true or false; got "x" for op "gt".',
    );
    expect(fails({ where: [{ column: 'region', op: 'in', value: ['north', 3] }] })).toBe(
      'where[0].value[1]: column "region" holds text; give a string; got 3 for op "in".',
    );
    expect(fails({ aggregates: [{ op: 'sum', column: 'region' }] })).toBe(
      'aggregates[0]: sum needs a number column, but "region" holds string values; use count, min or max, or pick a number column.',
    );
    expect(fails({ group_by: ['Region'] })).toBe(
      'group_by[0]: no column "Region" in "orders.csv"; columns are: region, product, amount, date, paid. Did you mean "region"?',
    );
    expect(fails({ group_by: ['region'], sort: [{ column: 'amount' }] })).toBe(
      'sort[0].column: no result column "amount" in "orders.csv"; result columns are: region, count.',
    );
    expect(fails({ group_by: ['region'], aggregates: [{ op: 'count', as: 'region' }] })).toBe(
      'aggregates: the result would have two columns named "region"; give one of them another name with "as".',
    );
  });
});

describe('describeTable', () => {
  it('gives types, nulls, distinct counts and basic statistics', () => {
    expect(describeTable(table)).toEqual([
      {
        name: 'region',
        type: 'string',
        nulls: 0,
        distinct: 3,
        distinct_capped: false,
        min: 'east',
        max: 'south',
        min_length: 4,
        max_length: 5,
        top_values: [
          { value: 'north', count: 3 },
          { value: 'south', count: 2 },
          { value: 'east', count: 1 },
        ],
      },
      {
        name: 'product',
        type: 'string',
        nulls: 0,
        distinct: 3,
        distinct_capped: false,
        min: 'Plum',
        max: 'pear',
        min_length: 4,
        max_length: 5,
        top_values: [
          { value: 'apple', count: 3 },
          { value: 'pear', count: 2 },
          { value: 'Plum', count: 1 },
        ],
      },
      { name: 'amount', type: 'number', nulls: 1, distinct: 5, distinct_capped: false, min: 10, max: 300, mean: 111.15 },
      { name: 'date', type: 'date', nulls: 0, distinct: 6, distinct_capped: false, min: '2023-12-31', max: '2024-03-02' },
      {
        name: 'paid',
        type: 'boolean',
        nulls: 1,
        distinct: 2,
        distinct_capped: false,
        top_values: [
          { value: true, count: 3 },
          { value: false, count: 2 },
        ],
      },
    ]);
  });

  it('caps distinct counts', async () => {
    const many = await parseTable({
      bytes: Buffer.from(`n\n${Array.from({ length: 1500 }, (_, i) => `v${i}`).join('\n')}\n`),
      displayPath: 'm.csv',
      maxRows: 5000,
      maxColumns: 1000,
    });
    expect(describeTable(many)[0]).toMatchObject({ distinct: 1000, distinct_capped: true, nulls: 0 });
  });
});
