import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { plugin } from '../src/index.ts';
import { QueryInputSchema } from '../src/QueryInputSchema.ts';
import { DescribeInputSchema, describeTool } from '../src/describeTool.ts';
import { queryTool } from '../src/queryTool.ts';
import { ReadInputSchema, readTool } from '../src/readTool.ts';
import { TableSettingsSchema } from '../src/TableSettingsSchema.ts';
import { makeContext, makeTree } from './makeContext.ts';
import { agreement } from '@trellis/testing';

let ws: ReturnType<typeof makeTree>;
let outside: ReturnType<typeof makeTree>;

beforeEach(() => {
  ws = makeTree({
    'data/people.csv': 'name,age,city\nAnn,41,Oslo\nBob,35,Rome\nCid,,Oslo\nDee,29,Lima\n',
    'data/ragged.csv': 'a,b\n1,2\n3\n4,5,6\n',
    'data/events.jsonl': '{"kind":"click","ms":12}\n{"kind":"view","ms":40}\n{"kind":"click","ms":7}\n',
  });
  outside = makeTree({ 'secret.csv': 'k\nv\n' });
});
afterEach(() => {
  ws.cleanup();
  outside.cleanup();
});

/** Rows have no prototype; spread them for toEqual. */
function plain<T extends { rows: ReadonlyArray<object> }>(result: T): T {
  return { ...result, rows: result.rows.map((r) => ({ ...r })) };
}

describe('settings and plugin', () => {
  it('accepts {} with safe defaults and refuses unknown keys', () => {
    expect(TableSettingsSchema.parse({})).toEqual({ root: '.', max_rows: 100_000, max_columns: 1000, max_bytes: 20 * 1024 * 1024 });
    expect(TableSettingsSchema.safeParse({ max_row: 5 }).success).toBe(false);
    expect(TableSettingsSchema.safeParse({ max_rows: 0 }).success).toBe(false);
    expect(TableSettingsSchema.safeParse({ max_columns: 0 }).success).toBe(false);
    expect(TableSettingsSchema.safeParse({ max_columns: 100_001 }).success).toBe(false);
    expect(plugin.settings?.key).toBe('table');
    expect(plugin.tools.map((t) => t.name)).toEqual(['read', 'query', 'describe']);
    for (const tool of plugin.tools)
      expect(tool.contract).toMatchObject({ sideEffects: false, capabilities: ['fs.read'], sandbox: 'read-only-fs' });
  });

  it('read and describe schemas refuse what they do not take', () => {
    expect(ReadInputSchema.safeParse({ path: 'a.csv', limit: 5, offset: 2, has_header: true, format: 'csv' }).success).toBe(true);
    expect(ReadInputSchema.safeParse({ path: '' }).success).toBe(false);
    expect(ReadInputSchema.safeParse({ path: 'a.csv', format: 'xlsx' }).success).toBe(false);
    expect(ReadInputSchema.safeParse({ path: 'a.csv', limit: 5000 }).success).toBe(false);
    expect(ReadInputSchema.safeParse({ path: 'a.csv', offset: -1 }).success).toBe(false);
    expect(DescribeInputSchema.safeParse({ path: 'a.csv', limit: 1 }).success).toBe(false);
    const reads = [
      { path: 'a.csv', limit: 5, offset: 2, has_header: true, format: 'tsv' },
      { path: 'a.csv', format: 'xlsx' },
      { path: 'a.csv', limit: 5000 },
      { path: 'a.csv', offset: 1.5 },
    ];
    expect(agreement(ReadInputSchema, reads)).toEqual([
      [true, true],
      [false, false],
      [false, false],
      [false, false],
    ]);
    expect(agreement(DescribeInputSchema, [{ path: 'a.json' }, { path: 'a.json', limit: 1 }])).toEqual([
      [true, true],
      [false, false],
    ]);
  });
});

describe('core-table.read', () => {
  it('returns typed rows with columns, paging and header info', async () => {
    const result = await readTool.run(
      ReadInputSchema.parse({ path: 'data/people.csv', offset: 1, limit: 2 }),
      makeContext({ workspace: ws.dir }),
    );
    expect(plain(result)).toEqual({
      path: 'data/people.csv',
      format: 'csv',
      has_header: true,
      header: 'detected',
      total_rows: 4,
      ragged_rows: [],
      ragged_row_count: 0,
      warnings: [],
      columns: [
        { name: 'name', type: 'string' },
        { name: 'age', type: 'number' },
        { name: 'city', type: 'string' },
      ],
      rows: [
        { name: 'Bob', age: 35, city: 'Rome' },
        { name: 'Cid', age: null, city: 'Oslo' },
      ],
      offset: 1,
      returned: 2,
      truncated: true,
    });
  });

  it('reports ragged rows', async () => {
    const result = await readTool.run(ReadInputSchema.parse({ path: 'data/ragged.csv' }), makeContext({ workspace: ws.dir }));
    expect(result).toMatchObject({
      ragged_rows: [
        { row: 2, line: 3, fields: 1, expected: 2 },
        { row: 3, line: 4, fields: 3, expected: 2 },
      ],
      ragged_row_count: 2,
      warnings: ['2 row(s) do not have 2 fields: missing fields are null, extra fields in 1 row(s) were dropped (first: row 2, line 3).'],
    });
    expect(plain(result).rows).toEqual([
      { a: 1, b: 2 },
      { a: 3, b: null },
      { a: 4, b: 5 },
    ]);
  });

  it('reads from the configured root and refuses escapes through the tool', async () => {
    const ctx = makeContext({ workspace: ws.dir, settings: { root: 'data' } });
    expect((await readTool.run(ReadInputSchema.parse({ path: 'people.csv' }), ctx)).total_rows).toBe(4);
    symlinkSync(join(outside.dir, 'secret.csv'), join(ws.dir, 'data', 'leak.csv'));
    for (const path of ['../x.csv', '../../etc/passwd', join(outside.dir, 'secret.csv'), 'leak.csv']) {
      await expect(readTool.run(ReadInputSchema.parse({ path }), ctx)).rejects.toMatchObject({ code: 'PATH_NOT_ALLOWED' });
      await expect(readTool.canonicalize!(ReadInputSchema.parse({ path }), ctx)).rejects.toMatchObject({ code: 'PATH_NOT_ALLOWED' });
    }
  });

  it('canonicalizes the path relative to the root', async () => {
    const ctx = makeContext({ workspace: ws.dir });
    expect(await readTool.canonicalize!(ReadInputSchema.parse({ path: `${ws.dir}/data/../data/people.csv`, limit: 3 }), ctx)).toEqual({
      input: { path: 'data/people.csv', limit: 3 },
      summary: { path: 'data/people.csv' },
    });
  });

  it('applies max_rows and max_bytes from the settings', async () => {
    await expect(
      readTool.run(ReadInputSchema.parse({ path: 'data/people.csv' }), makeContext({ workspace: ws.dir, settings: { max_rows: 3 } })),
    ).rejects.toMatchObject({
      code: 'TOO_LARGE',
      message:
        'path: "data/people.csv" has more than max_rows = 3 data rows ([runtime.tools.table]); use a smaller extract or raise the limit.',
    });
  });
});

describe('core-table.query and describe, end to end', () => {
  it('queries a CSV file', async () => {
    const input = QueryInputSchema.parse({
      path: 'data/people.csv',
      where: [{ column: 'city', op: 'eq', value: 'Oslo' }],
      group_by: ['city'],
      aggregates: [{ op: 'count' }, { op: 'mean', column: 'age' }],
    });
    const result = await queryTool.run(input, makeContext({ workspace: ws.dir }));
    expect(plain(result)).toMatchObject({
      path: 'data/people.csv',
      total_rows: 4,
      columns: [
        { name: 'city', type: 'string' },
        { name: 'count', type: 'number' },
        { name: 'mean_age', type: 'number' },
      ],
      rows: [{ city: 'Oslo', count: 2, mean_age: 41 }],
      matched_rows: 2,
      row_count: 1,
      returned: 1,
      truncated: false,
    });
  });

  it('queries JSON Lines', async () => {
    const input = QueryInputSchema.parse({
      path: 'data/events.jsonl',
      group_by: ['kind'],
      aggregates: [{ op: 'sum', column: 'ms' }],
      sort: [{ column: 'kind' }],
    });
    const result = await queryTool.run(input, makeContext({ workspace: ws.dir }));
    expect(plain(result).rows).toEqual([
      { kind: 'click', sum_ms: 19 },
      { kind: 'view', sum_ms: 40 },
    ]);
  });

  it('describes a file', async () => {
    const result = await describeTool.run(DescribeInputSchema.parse({ path: 'data/people.csv' }), makeContext({ workspace: ws.dir }));
    expect(result.columns[1]).toEqual({
      name: 'age',
      type: 'number',
      nulls: 1,
      distinct: 3,
      distinct_capped: false,
      min: 29,
      max: 41,
      mean: 35,
    });
    expect(result.total_rows).toBe(4);
  });
});

describe('max_columns', () => {
  /** `[{"k0":0},{"k1":1},…]`: every row with a key of its own, so each row adds a column. */
  const sparseJson = (keys: number, emptyRows = 0) =>
    `[${[...Array.from({ length: keys }, (_, i) => `{"k${i}":${i}}`), ...Array.from({ length: emptyRows }, () => '{}')].join(',')}]`;
  const header = (columns: number) => Array.from({ length: columns }, (_, i) => `c${i}`).join(',');
  let wide: ReturnType<typeof makeTree>;
  beforeEach(() => {
    wide = makeTree({
      'sparse.json': sparseJson(1001),
      'wide.csv': `${header(1001)}\n1\n2\n`,
      'edge.json': sparseJson(1000, 50),
      'edge.csv': `${header(1000)}\n1,x\n2\n`,
    });
  });
  afterEach(() => wide.cleanup());

  it('refuses a JSON file with more distinct keys than the default 1000 columns', async () => {
    await expect(
      describeTool.run(DescribeInputSchema.parse({ path: 'sparse.json' }), makeContext({ workspace: wide.dir })),
    ).rejects.toMatchObject({
      code: 'TOO_LARGE',
      message:
        'path: "sparse.json" has 1001 columns (distinct keys across its rows), more than max_columns = 1000 ([runtime.tools.table]); ' +
        'use an extract with fewer columns or raise the limit. A key that differs from row to row (an id or a date used as a key) makes a column of its own; keep such data in values instead.',
    });
  });

  it('refuses a CSV file whose header is wider than the default 1000 columns', async () => {
    await expect(readTool.run(ReadInputSchema.parse({ path: 'wide.csv' }), makeContext({ workspace: wide.dir }))).rejects.toMatchObject({
      code: 'TOO_LARGE',
      message:
        'path: "wide.csv" has 1001 columns (fields in its header row), more than max_columns = 1000 ([runtime.tools.table]); use an extract with fewer columns or raise the limit.',
    });
  });

  it('reads, queries and describes tables of exactly 1000 columns, and applies a raised limit', async () => {
    const ctx = makeContext({ workspace: wide.dir });
    const json = await describeTool.run(DescribeInputSchema.parse({ path: 'edge.json' }), ctx);
    expect(json.total_rows).toBe(1050);
    expect(json.columns).toHaveLength(1000);
    expect(json.columns[999]).toEqual({
      name: 'k999',
      type: 'number',
      nulls: 1049,
      distinct: 1,
      distinct_capped: false,
      min: 999,
      max: 999,
      mean: 999,
    });
    // Results list every column, null where a row has no such key.
    const page = await readTool.run(ReadInputSchema.parse({ path: 'edge.json', offset: 1, limit: 1 }), ctx);
    expect(Object.entries(page.rows[0]!).filter(([, v]) => v !== null)).toEqual([['k1', 1]]);
    expect(Object.keys(page.rows[0]!)).toHaveLength(1000);
    const query = QueryInputSchema.parse({
      path: 'edge.json',
      where: [{ column: 'k7', op: 'is_null', value: false }],
      aggregates: [{ op: 'count', column: 'k7' }],
    });
    expect(plain(await queryTool.run(query, ctx)).rows).toEqual([{ count_k7: 1 }]);

    const csv = await describeTool.run(DescribeInputSchema.parse({ path: 'edge.csv' }), ctx);
    expect(csv.columns.slice(0, 3)).toEqual([
      { name: 'c0', type: 'number', nulls: 0, distinct: 2, distinct_capped: false, min: 1, max: 2, mean: 1.5 },
      {
        name: 'c1',
        type: 'string',
        nulls: 1,
        distinct: 1,
        distinct_capped: false,
        min: 'x',
        max: 'x',
        min_length: 1,
        max_length: 1,
        top_values: [{ value: 'x', count: 1 }],
      },
      { name: 'c2', type: 'null', nulls: 2, distinct: 0, distinct_capped: false },
    ]);
    expect(csv.ragged_row_count).toBe(2);
    const raised = await readTool.run(
      ReadInputSchema.parse({ path: 'wide.csv' }),
      makeContext({ workspace: wide.dir, settings: { max_columns: 1001 } }),
    );
    expect(raised.columns).toHaveLength(1001);
    expect(plain(raised).rows.map((r) => r['c1000'])).toEqual([null, null]);
  });
});

describe('hostile nesting', () => {
  it('refuses JSON rows nested 200 000 levels deep with the depth limit, in every tool, instead of overflowing the stack', async () => {
    const deep = 200_000;
    const tree = makeTree({
      'deep.json': `[{"a":${'['.repeat(deep)}${']'.repeat(deep)}}]`,
      'deep.jsonl': `{"ok":1}\n{"a":${'{"b":'.repeat(deep)}1${'}'.repeat(deep)}}\n`,
      'fine.json': `[{"a":${'['.repeat(50)}1${']'.repeat(50)}}]`,
    });
    try {
      const ctx = makeContext({ workspace: tree.dir });
      const outcomes: string[] = [];
      for (const path of ['deep.json', 'deep.jsonl']) {
        for (const tool of [readTool, describeTool, queryTool] as const) {
          const input = (tool === queryTool ? QueryInputSchema : tool === readTool ? ReadInputSchema : DescribeInputSchema).parse({ path });
          try {
            const canonical = await tool.canonicalize!(input as never, ctx as never);
            await tool.run(canonical.input as never, ctx as never);
            outcomes.push(`${tool.name} ${path}: ok`);
          } catch (error) {
            outcomes.push(
              `${tool.name} ${path}: ${(error as { code?: string }).code} ${(error as Error).message.replace(tree.dir, '<ws>')}`,
            );
          }
        }
      }
      const limit =
        "nests objects or arrays more than 100 levels deep, core-table's depth limit for JSON rows; flatten the data or extract the part you need into its own file.";
      expect(outcomes).toEqual([
        `read deep.json: INVALID_ARGUMENT path: "deep.json": element 0 of the array ${limit}`,
        `describe deep.json: INVALID_ARGUMENT path: "deep.json": element 0 of the array ${limit}`,
        `query deep.json: INVALID_ARGUMENT path: "deep.json": element 0 of the array ${limit}`,
        `read deep.jsonl: INVALID_ARGUMENT path: "deep.jsonl": line 2 ${limit}`,
        `describe deep.jsonl: INVALID_ARGUMENT path: "deep.jsonl": line 2 ${limit}`,
        `query deep.jsonl: INVALID_ARGUMENT path: "deep.jsonl": line 2 ${limit}`,
      ]);
      const fine = await describeTool.run(DescribeInputSchema.parse({ path: join(tree.dir, 'fine.json') }) as never, ctx as never);
      expect(fine.columns.map((column) => column.name)).toEqual(['a']);
    } finally {
      tree.cleanup();
    }
  });
});
