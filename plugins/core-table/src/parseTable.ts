import { setImmediate as nextTurn } from 'node:timers/promises';
import { parse } from 'csv-parse';
import type { CsvError } from 'csv-parse';
import { ERROR_CODES, ToolError } from '@trellis/sdk';
import { nestsDeeperThan } from '@trellis/sdk/internal';
import { combineKinds, convertText, inferTextKind, jsonKind } from './inferValue.ts';
import type { Cell, ColumnType } from './inferValue.ts';

/** The file formats core-table reads. */
export const TABLE_FORMATS = ['csv', 'tsv', 'json', 'jsonl'] as const;

/** A table file format. */
export type TableFormat = (typeof TABLE_FORMATS)[number];

/** A column: its name (from the header, or `column_N`) and inferred type. */
export interface Column {
  readonly name: string;
  readonly type: ColumnType;
}

/** A row whose field count differs from the header's. */
export interface RaggedRow {
  /** 1-based data row (the header is not counted). */
  readonly row: number;
  /** 1-based line in the file where the row starts. */
  readonly line: number;
  readonly fields: number;
  readonly expected: number;
}

/**
 * A parsed table: typed rows keyed by column name. A row holds only the cells its file has: a JSON
 * key the object lacks, or a CSV field past the end of a short row, is absent and reads as null
 * (`row[name] ?? null`; `completeRow` fills them in). So building a table costs what the file holds,
 * not rows × columns.
 */
export interface Table {
  readonly format: TableFormat;
  readonly hasHeader: boolean;
  /** How `hasHeader` was decided. */
  readonly headerSource: 'given' | 'detected' | 'not applicable';
  readonly columns: readonly Column[];
  /** Typed rows; an absent column is null. */
  readonly rows: ReadonlyArray<Readonly<Record<string, Cell>>>;
  /** Rows with too few fields (missing ones are null) or too many (extra fields dropped). */
  readonly raggedRows: readonly RaggedRow[];
  readonly warnings: readonly string[];
}

/** The format named by the extension, or sniffed from the content. */
export function detectFormat(path: string, text: string): TableFormat {
  const ext = path.toLowerCase().split('.').pop() ?? '';
  if (ext === 'csv') return 'csv';
  if (ext === 'tsv' || ext === 'tab') return 'tsv';
  if (ext === 'json') return 'json';
  if (ext === 'jsonl' || ext === 'ndjson') return 'jsonl';
  const start = text.trimStart();
  if (start.startsWith('[')) return 'json';
  if (start.startsWith('{')) return 'jsonl';
  const firstLine = start.split('\n', 1)[0] ?? '';
  return (firstLine.match(/\t/g)?.length ?? 0) > (firstLine.match(/,/g)?.length ?? 0) ? 'tsv' : 'csv';
}

/** Unique, non-empty column names; reports every rename. */
function uniqueNames(raw: readonly string[], warnings: string[]): string[] {
  const seen = new Set<string>();
  // The next suffix to try per base name, so a header of many equal names stays linear.
  const nextSuffix = new Map<string, number>();
  return raw.map((value, i) => {
    const base = value.trim() === '' ? `column_${i + 1}` : value.trim();
    let name = base;
    let n = nextSuffix.get(base) ?? 2;
    for (; seen.has(name); n += 1) name = `${base}_${n}`;
    nextSuffix.set(base, n);
    if (name !== value)
      warnings.push(`column ${i + 1}: header "${value}" ${value.trim() === '' ? 'is empty' : 'is a duplicate'}; named "${name}".`);
    seen.add(name);
    return name;
  });
}

/**
 * Whether the first record is a header: every cell non-empty, no two alike, and none that looks
 * like data (a number, boolean or date).
 */
export function looksLikeHeader(first: readonly string[]): boolean {
  if (first.length === 0) return false;
  const trimmed = first.map((v) => v.trim());
  if (trimmed.some((v) => v === '')) return false;
  if (new Set(trimmed).size !== trimmed.length) return false;
  return trimmed.every((v) => inferTextKind(v) === 'string');
}

/** A row object without a prototype, so a column named "__proto__" is just a column. */
function emptyRow(): Record<string, Cell> {
  return Object.create(null) as Record<string, Cell>;
}

/** `row` with every column: those it lacks as null. For results, where a missing key would look like a missing column. */
export function completeRow(row: Readonly<Record<string, Cell>>, columns: readonly Column[]): Record<string, Cell> {
  const out = emptyRow();
  for (const { name } of columns) out[name] = row[name] ?? null;
  return out;
}

function csvFailure(displayPath: string, format: 'csv' | 'tsv', error: unknown): ToolError {
  const e = error as CsvError & { lines?: number };
  const line = e.lines === undefined ? '' : ` at line ${e.lines}`;
  return new ToolError(
    ERROR_CODES.INVALID_ARGUMENT,
    `path: "${displayPath}" is not valid ${format.toUpperCase()}${line}: ${e.message.replace(/^Invalid Record Length: /, '')}. ` +
      'Check the quoting there (a quote inside a quoted field must be doubled: "").',
  );
}

/** Characters fed to the CSV parser between two turns of the event loop. */
const CHUNK_CHARS = 256 * 1024;

type CsvRecord = { info: { lines: number }; record: string[] };

/**
 * Parses CSV/TSV text in chunks, yielding to the event loop between them and stopping when the
 * signal aborts, so a large file neither blocks the host nor outlives the call's deadline. Stops
 * reading once `maxRecords` records are in.
 */
async function readRecords(options: {
  text: string;
  format: 'csv' | 'tsv';
  displayPath: string;
  maxRecords: number;
  signal: AbortSignal | undefined;
}): Promise<CsvRecord[]> {
  const { text, format, displayPath, maxRecords, signal } = options;
  const records: CsvRecord[] = [];
  let failure: unknown;
  const parser = parse({
    bom: true,
    delimiter: format === 'tsv' ? '\t' : ',',
    relax_column_count: true,
    skip_empty_lines: true,
    info: true,
  });
  parser.on('readable', () => {
    let record: unknown;
    while ((record = parser.read()) !== null) records.push(record as CsvRecord);
  });
  parser.on('error', (error) => {
    failure = error;
  });
  const ended = new Promise<void>((resolve) => parser.once('end', resolve).once('error', () => resolve()));
  const stopIfAborted = () => {
    if (!signal?.aborted) return;
    parser.destroy();
    throw new ToolError(
      ERROR_CODES.ABORTED,
      `Reading "${displayPath}" stopped: the call was aborted (deadline reached or caller gave up).`,
    );
  };
  for (let at = 0; at < text.length && failure === undefined && records.length < maxRecords; at += CHUNK_CHARS) {
    stopIfAborted();
    parser.write(text.slice(at, at + CHUNK_CHARS));
    await nextTurn();
  }
  stopIfAborted();
  if (failure === undefined && records.length < maxRecords) {
    parser.end();
    await ended;
  } else {
    parser.destroy();
  }
  if (failure !== undefined) throw csvFailure(displayPath, format, failure);
  return records.slice(0, maxRecords);
}

async function parseDelimited(options: {
  text: string;
  displayPath: string;
  format: 'csv' | 'tsv';
  hasHeader: boolean | undefined;
  maxRows: number;
  maxColumns: number;
  signal: AbortSignal | undefined;
}): Promise<Table> {
  const { text, displayPath, format, maxRows, maxColumns } = options;
  // One for the header and one to notice a table over the limit.
  const records = await readRecords({ text, format, displayPath, maxRecords: maxRows + 2, signal: options.signal });
  const warnings: string[] = [];
  const first = records[0]?.record ?? [];
  const hasHeader = options.hasHeader ?? looksLikeHeader(first);
  const dataRecords = hasHeader ? records.slice(1) : records;
  checkRowLimit(displayPath, dataRecords.length, maxRows);
  const widest = hasHeader
    ? undefined
    : records.reduce<CsvRecord | undefined>((max, r) => (r.record.length > (max?.record.length ?? 0) ? r : max), undefined);
  const width = hasHeader ? first.length : (widest?.record.length ?? 0);
  if (width > maxColumns) {
    const counted = hasHeader
      ? 'fields in its header row'
      : `fields in its widest row, line ${lineOfRecord(widest!.info.lines, widest!.record)}`;
    throw tooManyColumns({ displayPath, found: `${width} columns (${counted})`, maxColumns });
  }
  const names = hasHeader ? uniqueNames(first, warnings) : Array.from({ length: width }, (_, i) => `column_${i + 1}`);

  // Only the fields a row has are looked at and stored: a short row costs its own length, not the header's.
  const raggedRows: RaggedRow[] = [];
  const kinds = names.map(() => new Set<ColumnType>());
  for (const [i, { record, info }] of dataRecords.entries()) {
    if (record.length !== width) {
      raggedRows.push({ row: i + 1, line: lineOfRecord(info.lines, record), fields: record.length, expected: width });
    }
    const fields = Math.min(record.length, width);
    for (let c = 0; c < fields; c += 1) kinds[c]!.add(inferTextKind(record[c]!));
  }
  const columns = names.map((name, c) => ({ name, type: combineKinds(kinds[c]!, 'text') }));
  const rows = dataRecords.map(({ record }) => {
    const row = emptyRow();
    const fields = Math.min(record.length, width);
    for (let c = 0; c < fields; c += 1) row[names[c]!] = convertText(record[c]!, columns[c]!.type);
    return row;
  });
  if (raggedRows.length > 0) {
    const longer = raggedRows.filter((r) => r.fields > r.expected).length;
    warnings.push(
      `${raggedRows.length} row(s) do not have ${width} fields: missing fields are null` +
        (longer > 0 ? `, extra fields in ${longer} row(s) were dropped` : '') +
        ` (first: row ${raggedRows[0]!.row}, line ${raggedRows[0]!.line}).`,
    );
  }
  return { format, hasHeader, headerSource: options.hasHeader === undefined ? 'detected' : 'given', columns, rows, raggedRows, warnings };
}

/** csv-parse reports the line where a record ends; a record with embedded newlines started earlier. */
function lineOfRecord(endLine: number, record: readonly string[]): number {
  const embedded = record.reduce((n, field) => n + (field.match(/\r\n|\n|\r/g)?.length ?? 0), 0);
  return endLine - embedded;
}

function checkRowLimit(displayPath: string, rows: number, maxRows: number): void {
  if (rows > maxRows) {
    throw new ToolError(
      ERROR_CODES.TOO_LARGE,
      `path: "${displayPath}" has more than max_rows = ${maxRows} data rows ([runtime.tools.table]); use a smaller extract or raise the limit.`,
    );
  }
}

function tooManyColumns(options: { displayPath: string; found: string; maxColumns: number; hint?: string }): ToolError {
  return new ToolError(
    ERROR_CODES.TOO_LARGE,
    `path: "${options.displayPath}" has ${options.found}, more than max_columns = ${options.maxColumns} ([runtime.tools.table]); ` +
      `use an extract with fewer columns or raise the limit.${options.hint === undefined ? '' : ` ${options.hint}`}`,
  );
}

type JsonSource = {
  objects: ReadonlyArray<Record<string, unknown>>;
  format: 'json' | 'jsonl';
  displayPath: string;
  maxRows: number;
  maxColumns: number;
};

function fromObjects(options: JsonSource): Table {
  const { objects, displayPath, maxColumns } = options;
  checkRowLimit(displayPath, objects.length, options.maxRows);
  // Columns in first-seen order; counting them all first costs one pass over the keys the file holds.
  const index = new Map<string, number>();
  for (const object of objects) {
    for (const key of Object.keys(object)) if (!index.has(key)) index.set(key, index.size);
  }
  if (index.size > maxColumns) {
    throw tooManyColumns({
      displayPath,
      found: `${index.size} columns (distinct keys across its rows)`,
      maxColumns,
      hint: 'A key that differs from row to row (an id or a date used as a key) makes a column of its own; keep such data in values instead.',
    });
  }
  const names = [...index.keys()];
  const kinds = names.map(() => new Set<ColumnType>());
  // One pass over each row's own keys: a row costs its own size, not the number of columns.
  const rows = objects.map((object) => {
    const row = emptyRow();
    for (const key of Object.keys(object)) {
      const value = (object[key] ?? null) as Cell;
      kinds[index.get(key)!]!.add(jsonKind(value));
      row[key] = value;
    }
    return row;
  });
  const columns = names.map((name, c) => ({ name, type: combineKinds(kinds[c]!, 'json') }));
  return { format: options.format, hasHeader: true, headerSource: 'not applicable', columns, rows, raggedRows: [], warnings: [] };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

type TextSource = { text: string; displayPath: string; maxRows: number; maxColumns: number };

/**
 * Deepest nesting of objects and arrays a JSON row may hold below itself. Deeper data is refused
 * before anything walks it: typing, describing and serializing a cell recurse, and a value nested
 * 200 000 levels deep would exhaust the stack.
 */
export const MAX_JSON_DEPTH = 100;

function checkDepth(row: Record<string, unknown>, displayPath: string, where: string): void {
  if (!nestsDeeperThan(row, MAX_JSON_DEPTH + 1)) return;
  throw new ToolError(
    ERROR_CODES.INVALID_ARGUMENT,
    `path: "${displayPath}": ${where} nests objects or arrays more than ${MAX_JSON_DEPTH} levels deep, core-table's depth limit for JSON rows; flatten the data or extract the part you need into its own file.`,
  );
}

function parseJson(options: TextSource): Table {
  const { text, displayPath } = options;
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new ToolError(ERROR_CODES.INVALID_ARGUMENT, `path: "${displayPath}" is not valid JSON: ${(error as Error).message}.`);
  }
  if (!Array.isArray(data)) {
    const keys = isPlainObject(data) ? ` (an object with keys ${Object.keys(data).slice(0, 10).join(', ')})` : '';
    throw new ToolError(
      ERROR_CODES.INVALID_ARGUMENT,
      `path: "${displayPath}" must hold a JSON array of objects, one per row; its top level is not an array${keys}. Extract the array into its own file.`,
    );
  }
  const bad = data.findIndex((item) => !isPlainObject(item));
  if (bad !== -1) {
    throw new ToolError(
      ERROR_CODES.INVALID_ARGUMENT,
      `path: "${displayPath}": element ${bad} of the array is not an object; every row must be a JSON object.`,
    );
  }
  (data as Array<Record<string, unknown>>).forEach((row, index) => checkDepth(row, displayPath, `element ${index} of the array`));
  return fromObjects({ ...options, objects: data as Array<Record<string, unknown>>, format: 'json' });
}

function parseJsonLines(options: TextSource): Table {
  const { text, displayPath, maxRows } = options;
  const objects: Array<Record<string, unknown>> = [];
  const lines = text.split(/\r?\n/);
  for (const [i, line] of lines.entries()) {
    if (line.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      throw new ToolError(
        ERROR_CODES.INVALID_ARGUMENT,
        `path: "${displayPath}" line ${i + 1} is not valid JSON: ${(error as Error).message}.`,
      );
    }
    if (!isPlainObject(value)) {
      throw new ToolError(
        ERROR_CODES.INVALID_ARGUMENT,
        `path: "${displayPath}" line ${i + 1} is not a JSON object; every line must be one row object.`,
      );
    }
    checkDepth(value, displayPath, `line ${i + 1}`);
    objects.push(value);
    if (objects.length > maxRows) break;
  }
  return fromObjects({ ...options, objects, format: 'jsonl' });
}

/**
 * Parses table bytes. Throws `ToolError` naming the file, line and problem. CSV/TSV parsing yields
 * to the event loop and watches `signal`.
 */
export async function parseTable(options: {
  bytes: Buffer;
  displayPath: string;
  format?: TableFormat | undefined;
  hasHeader?: boolean | undefined;
  maxRows: number;
  /** Most columns: CSV/TSV header fields (widest row without a header), distinct JSON keys. */
  maxColumns: number;
  signal?: AbortSignal | undefined;
}): Promise<Table> {
  const { bytes, displayPath, maxRows, maxColumns } = options;
  if (bytes.subarray(0, 8192).includes(0)) {
    throw new ToolError(
      ERROR_CODES.INVALID_ARGUMENT,
      `path: "${displayPath}" looks binary (it contains NUL bytes); core-table reads UTF-8 CSV, TSV, JSON and JSONL.`,
    );
  }
  const text = bytes.toString('utf8').replace(/^\uFEFF/, '');
  const format = options.format ?? detectFormat(displayPath, text);
  switch (format) {
    case 'csv':
    case 'tsv':
      return parseDelimited({ text, displayPath, format, hasHeader: options.hasHeader, maxRows, maxColumns, signal: options.signal });
    case 'json':
      return parseJson({ text, displayPath, maxRows, maxColumns });
    case 'jsonl':
      return parseJsonLines({ text, displayPath, maxRows, maxColumns });
  }
}
