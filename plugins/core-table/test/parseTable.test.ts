import { describe, expect, it } from 'vitest';
import { completeRow, detectFormat, looksLikeHeader, parseTable } from '../src/parseTable.ts';
import { inferTextKind, isIsoDate } from '../src/inferValue.ts';

async function parse(
  text: string,
  extra: { format?: 'csv' | 'tsv' | 'json' | 'jsonl'; hasHeader?: boolean; maxRows?: number; maxColumns?: number; path?: string } = {},
) {
  const table = await parseTable({
    bytes: Buffer.from(text),
    displayPath: extra.path ?? 't.csv',
    format: extra.format,
    hasHeader: extra.hasHeader,
    maxRows: extra.maxRows ?? 1000,
    maxColumns: extra.maxColumns ?? 1000,
  });
  // Plain objects for toEqual (rows have no prototype).
  return { ...table, rows: table.rows.map((r) => ({ ...r })) };
}

describe('type inference', () => {
  it.each([
    ['42', 'number'],
    ['-3.5', 'number'],
    ['1e3', 'number'],
    ['.5', 'number'],
    ['0', 'number'],
    ['007', 'string'],
    ['1,000', 'string'],
    ['TRUE', 'boolean'],
    ['false', 'boolean'],
    ['2024-02-29', 'date'],
    ['2023-02-29', 'string'],
    ['2024-01-31T12:30:00Z', 'date'],
    ['2024-01-31 12:30', 'date'],
    ['2024-13-01', 'string'],
    ['', 'null'],
    ['  ', 'null'],
    ['hello', 'string'],
    ['NaN', 'string'],
    ['Infinity', 'string'],
  ])('%j is %s', (text, kind) => {
    expect(inferTextKind(text)).toBe(kind);
  });

  it('checks calendar dates', () => {
    expect(isIsoDate('2024-04-31')).toBe(false);
    expect(isIsoDate('2024-04-30T23:59:59.123+02:00')).toBe(true);
    expect(isIsoDate('2024-04-30T24:00')).toBe(false);
  });
});

describe('header detection and formats', () => {
  it('detects a header of unique text values only', () => {
    expect(looksLikeHeader(['name', 'age'])).toBe(true);
    expect(looksLikeHeader(['alice', '30'])).toBe(false);
    expect(looksLikeHeader(['name', 'name'])).toBe(false);
    expect(looksLikeHeader(['name', ''])).toBe(false);
    expect(looksLikeHeader(['2024-01-01', 'x'])).toBe(false);
  });

  it('picks the format from the extension, else the content', () => {
    expect(detectFormat('a.TSV', '')).toBe('tsv');
    expect(detectFormat('a.ndjson', '')).toBe('jsonl');
    expect(detectFormat('a.txt', ' [{"a":1}]')).toBe('json');
    expect(detectFormat('a.txt', '{"a":1}\n')).toBe('jsonl');
    expect(detectFormat('a.txt', 'a\tb,c\tdx\n')).toBe('tsv');
    expect(detectFormat('a', 'a,b\n')).toBe('csv');
  });
});

describe('CSV', () => {
  it('types columns, handles quotes, embedded newlines, BOM and CRLF', async () => {
    const table = await parse(
      '\uFEFFname,age,joined,active,note\r\n"Smith, Ann",41,2020-01-05,true,"said ""hi""\r\nthen left"\r\nBob,,2021-03-01,false,\r\n',
    );
    expect(table).toEqual({
      format: 'csv',
      hasHeader: true,
      headerSource: 'detected',
      columns: [
        { name: 'name', type: 'string' },
        { name: 'age', type: 'number' },
        { name: 'joined', type: 'date' },
        { name: 'active', type: 'boolean' },
        { name: 'note', type: 'string' },
      ],
      rows: [
        { name: 'Smith, Ann', age: 41, joined: '2020-01-05', active: true, note: 'said "hi"\r\nthen left' },
        { name: 'Bob', age: null, joined: '2021-03-01', active: false, note: null },
      ],
      raggedRows: [],
      warnings: [],
    });
  });

  it('keeps a column with one non-number as text, whole', async () => {
    const table = await parse('id,code\n1,10\n2,n/a\n');
    expect(table.columns).toEqual([
      { name: 'id', type: 'number' },
      { name: 'code', type: 'string' },
    ]);
    expect(table.rows).toEqual([
      { id: 1, code: '10' },
      { id: 2, code: 'n/a' },
    ]);
  });

  it('reports ragged rows with row and line, padding and dropping', async () => {
    const table = await parse('a,b,c\n1,2,3\n4,5\n"multi\nline",7,8,9\n10,11,12\n');
    expect(table.raggedRows).toEqual([
      { row: 2, line: 3, fields: 2, expected: 3 },
      { row: 3, line: 4, fields: 4, expected: 3 },
    ]);
    // A short row holds only its own fields; the missing one reads as null.
    expect(table.rows[1]).toEqual({ a: '4', b: 5 });
    expect({ ...completeRow(table.rows[1]!, table.columns) }).toEqual({ a: '4', b: 5, c: null });
    expect(table.rows[2]).toEqual({ a: 'multi\nline', b: 7, c: 8 });
    expect(table.warnings).toEqual([
      '2 row(s) do not have 3 fields: missing fields are null, extra fields in 1 row(s) were dropped (first: row 2, line 3).',
    ]);
  });

  it('names columns when there is no header, and honours has_header', async () => {
    const detected = await parse('1,2\n3,4\n');
    expect(detected.hasHeader).toBe(false);
    expect(detected.columns.map((c) => c.name)).toEqual(['column_1', 'column_2']);
    expect(detected.rows).toEqual([
      { column_1: 1, column_2: 2 },
      { column_1: 3, column_2: 4 },
    ]);
    const forced = await parse('x,y\n3,4\n', { hasHeader: false });
    expect(forced).toMatchObject({ hasHeader: false, headerSource: 'given' });
    expect(forced.rows).toEqual([
      { column_1: 'x', column_2: 'y' },
      { column_1: '3', column_2: '4' },
    ]);
  });

  it('renames empty and duplicate headers and says so', async () => {
    const table = await parse('a,a,,b\n1,2,3,4\n', { hasHeader: true });
    expect(table.columns.map((c) => c.name)).toEqual(['a', 'a_2', 'column_3', 'b']);
    expect(table.warnings).toEqual([
      'column 2: header "a" is a duplicate; named "a_2".',
      'column 3: header "" is empty; named "column_3".',
    ]);
  });

  it('treats a "__proto__" header as an ordinary column', async () => {
    const table = await parseTable({ bytes: Buffer.from('__proto__,b\n1,2\n'), displayPath: 't.csv', maxRows: 10, maxColumns: 1000 });
    expect(Object.keys(table.rows[0]!)).toEqual(['__proto__', 'b']);
    expect(table.rows[0]!['__proto__']).toBe(1);
  });

  it('reads TSV', async () => {
    expect((await parse('a\tb\n"x,y"\t2\n', { path: 't.tsv' })).rows).toEqual([{ a: 'x,y', b: 2 }]);
  });

  it('names the line of a broken quote', async () => {
    await expect(parse('a,b\n1,2\n3,"x"y\n')).rejects.toThrow(
      'path: "t.csv" is not valid CSV at line 3: Invalid Closing Quote: got "y" at line 3 instead of delimiter, record delimiter, trimable character (if activated) or comment. Check the quoting there (a quote inside a quoted field must be doubled: "").',
    );
  });

  it('yields while parsing and stops when the call is aborted', async () => {
    const big = Buffer.from(`a,b\n${'1,hello\n'.repeat(50_000)}`);
    const controller = new AbortController();
    const parsing = parseTable({ bytes: big, displayPath: 'big.csv', maxRows: 1_000_000, maxColumns: 1000, signal: controller.signal });
    // Runs only because parsing yields to the event loop after its first chunk.
    setImmediate(() => controller.abort());
    await expect(parsing).rejects.toMatchObject({
      code: 'ABORTED',
      message: 'Reading "big.csv" stopped: the call was aborted (deadline reached or caller gave up).',
    });
    const whole = await parseTable({ bytes: big, displayPath: 'big.csv', maxRows: 1_000_000, maxColumns: 1000 });
    expect(whole.rows).toHaveLength(50_000);
  });

  it('refuses more than max_rows and binary content', async () => {
    await expect(parse('a\n1\n2\n3\n', { maxRows: 2 })).rejects.toThrow(
      'path: "t.csv" has more than max_rows = 2 data rows ([runtime.tools.table]); use a smaller extract or raise the limit.',
    );
    expect((await parse('a\n1\n2\n', { maxRows: 2 })).rows).toHaveLength(2);
    await expect(
      parseTable({ bytes: Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x00, 0x00]), displayPath: 'x.csv', maxRows: 5, maxColumns: 1000 }),
    ).rejects.toThrow(/looks binary/);
  });
});

describe('column limit', () => {
  const tooWide = (path: string, found: string) =>
    `path: "${path}" has ${found}, more than max_columns = 2 ([runtime.tools.table]); use an extract with fewer columns or raise the limit.`;

  it('counts CSV/TSV header fields, or the widest row without a header', async () => {
    await expect(parse('a,b,c\n1,2,3\n', { maxColumns: 2 })).rejects.toMatchObject({
      code: 'TOO_LARGE',
      message: tooWide('t.csv', '3 columns (fields in its header row)'),
    });
    await expect(parse('a\tb\tc\n1\t2\t3\n', { path: 't.tsv', maxColumns: 2 })).rejects.toThrow(
      tooWide('t.tsv', '3 columns (fields in its header row)'),
    );
    await expect(parse('1,2\n3\n"4\n",5,6\n', { maxColumns: 2 })).rejects.toThrow(
      tooWide('t.csv', '3 columns (fields in its widest row, line 3)'),
    );
    // With a header, a longer data row is a ragged row (extra fields dropped), not more columns.
    const table = await parse('a,b\n1,2,3,4,5\n', { maxColumns: 2 });
    expect(table.columns.map((c) => c.name)).toEqual(['a', 'b']);
    expect(table.rows).toEqual([{ a: 1, b: 2 }]);
  });

  it('counts distinct keys across JSON and JSON Lines rows', async () => {
    const hint =
      ' A key that differs from row to row (an id or a date used as a key) makes a column of its own; keep such data in values instead.';
    await expect(parse('[{"a":1},{"b":2},{"a":3,"c":4}]', { path: 't.json', maxColumns: 2 })).rejects.toMatchObject({
      code: 'TOO_LARGE',
      message: tooWide('t.json', '3 columns (distinct keys across its rows)') + hint,
    });
    await expect(parse('{"a":1}\n{"b":2}\n{"c":3}\n', { path: 't.jsonl', maxColumns: 2 })).rejects.toThrow(
      tooWide('t.jsonl', '3 columns (distinct keys across its rows)') + hint,
    );
    expect((await parse('[{"a":1},{"b":2},{"a":3}]', { path: 't.json', maxColumns: 2 })).columns).toEqual([
      { name: 'a', type: 'number' },
      { name: 'b', type: 'number' },
    ]);
  });

  it('names many duplicate headers as before', async () => {
    const table = await parse(`${Array.from({ length: 1000 }, () => 'a').join(',')},a_2\n`, { hasHeader: true, maxColumns: 1001 });
    const names = table.columns.map((c) => c.name);
    expect(names.slice(0, 3)).toEqual(['a', 'a_2', 'a_3']);
    expect(names.slice(-2)).toEqual(['a_1000', 'a_2_2']);
    expect(new Set(names).size).toBe(1001);
  });
});

describe('JSON and JSON Lines', () => {
  it('reads an array of objects with the union of keys', async () => {
    const table = await parse('[{"a":1,"b":"x"},{"a":2.5,"c":[1,2]},{"a":null,"b":"2024-01-01"}]', { path: 't.json' });
    expect(table.columns).toEqual([
      { name: 'a', type: 'number' },
      { name: 'b', type: 'string' },
      { name: 'c', type: 'json' },
    ]);
    // Each row holds its own keys only; a key it lacks reads as null.
    expect(table.rows).toEqual([
      { a: 1, b: 'x' },
      { a: 2.5, c: [1, 2] },
      { a: null, b: '2024-01-01' },
    ]);
    expect(table.headerSource).toBe('not applicable');
  });

  it('marks mixed kinds', async () => {
    expect((await parse('[{"a":1},{"a":"x"},{"a":true}]', { path: 't.json' })).columns).toEqual([{ name: 'a', type: 'mixed' }]);
  });

  it('names what is wrong', async () => {
    await expect(parse('{"rows":[]}', { path: 't.json' })).rejects.toThrow(
      'path: "t.json" must hold a JSON array of objects, one per row; its top level is not an array (an object with keys rows). Extract the array into its own file.',
    );
    await expect(parse('[{"a":1},3]', { path: 't.json' })).rejects.toThrow(
      'path: "t.json": element 1 of the array is not an object; every row must be a JSON object.',
    );
    await expect(parse('[{"a":1},', { path: 't.json' })).rejects.toThrow(/^path: "t.json" is not valid JSON: /);
    await expect(parse('{"a":1}\n\n{"a":\n', { path: 't.jsonl' })).rejects.toThrow(/^path: "t.jsonl" line 3 is not valid JSON: /);
    await expect(parse('{"a":1}\n[1]\n', { path: 't.jsonl' })).rejects.toThrow(
      'path: "t.jsonl" line 2 is not a JSON object; every line must be one row object.',
    );
  });

  it('reads JSON Lines, skipping blank lines', async () => {
    const table = await parse('{"a":1}\r\n\n{"a":2,"b":false}\n', { path: 't.jsonl' });
    expect(table.columns).toEqual([
      { name: 'a', type: 'number' },
      { name: 'b', type: 'boolean' },
    ]);
    expect(table.rows).toEqual([{ a: 1 }, { a: 2, b: false }]);
  });
});
