import { ERROR_CODES, ToolError } from '@trellis/sdk';
import { closestName } from '@trellis/sdk/internal';
import { cellText, compareCells } from './compareCells.ts';
import { isIsoDate } from './inferValue.ts';
import type { Cell, ColumnType } from './inferValue.ts';
import { completeRow } from './parseTable.ts';
import type { Column, Table } from './parseTable.ts';
import type { Aggregate, Filter, QueryInput } from './QueryInputSchema.ts';

/** Rows `query` returns when no limit is given. */
export const DEFAULT_QUERY_LIMIT = 100;

/** The result of a query. */
export interface QueryResult {
  readonly columns: readonly Column[];
  readonly rows: ReadonlyArray<Readonly<Record<string, Cell>>>;
  /** Rows matching `where` (before grouping). */
  readonly matched_rows: number;
  /** Result rows before `limit`: matched rows, or groups when grouping. */
  readonly row_count: number;
  readonly returned: number;
  /** True when `limit` cut the result. */
  readonly truncated: boolean;
}

type Row = Readonly<Record<string, Cell>>;

/** "no column …; columns are …; did you mean …" */
function unknownColumn(where: string, name: string, columns: readonly Column[], displayPath: string, what = 'column'): ToolError {
  const names = columns.map((c) => c.name);
  const near = closestName(name, names, { ignoreCase: true, maxDistance: (wanted) => Math.max(1, Math.floor(wanted.length / 4)) });
  const shown = names.length > 50 ? `${names.slice(0, 50).join(', ')}, … (${names.length} in all)` : names.join(', ');
  return new ToolError(
    ERROR_CODES.INVALID_ARGUMENT,
    `${where}: no ${what} "${name}" in "${displayPath}"; ${what === 'column' ? 'columns' : 'result columns'} are: ${shown}.` +
      (near === undefined ? '' : ` Did you mean "${near}"?`),
  );
}

function findColumn(columns: readonly Column[], name: string, where: string, displayPath: string, what?: string): Column {
  const column = columns.find((c) => c.name === name);
  if (column === undefined) throw unknownColumn(where, name, columns, displayPath, what);
  return column;
}

function describeKind(type: ColumnType): string {
  switch (type) {
    case 'number':
      return 'numbers; give a number such as 42 (not a string)';
    case 'boolean':
      return 'booleans; give true or false';
    case 'date':
      return 'ISO dates; give a date string such as "2024-01-31"';
    default:
      return 'text; give a string';
  }
}

/** Checks one filter value against its column's type, so a mistyped value is an error, not an empty result. */
function checkValue(value: unknown, column: Column, where: string, op: string): void {
  const type = column.type;
  if (type === 'null' || type === 'mixed' || type === 'json') return;
  const fits =
    (type === 'number' && typeof value === 'number') ||
    (type === 'boolean' && typeof value === 'boolean') ||
    (type === 'date' && typeof value === 'string' && isIsoDate(value)) ||
    (type === 'string' && typeof value === 'string');
  if (!fits) {
    throw new ToolError(
      ERROR_CODES.INVALID_ARGUMENT,
      `${where}: column "${column.name}" holds ${describeKind(type)}; got ${JSON.stringify(value)} for op "${op}".`,
    );
  }
  if (type === 'boolean' && ['lt', 'le', 'gt', 'ge'].includes(op)) {
    throw new ToolError(
      ERROR_CODES.INVALID_ARGUMENT,
      `${where}: column "${column.name}" holds booleans; use op "eq" or "ne", not "${op}".`,
    );
  }
}

function compileFilter(filter: Filter, index: number, columns: readonly Column[], displayPath: string): (row: Row) => boolean {
  const where = `where[${index}]`;
  const column = findColumn(columns, filter.column, `${where}.column`, displayPath);
  const name = column.name;
  switch (filter.op) {
    case 'is_null': {
      const wantNull = filter.value ?? true;
      return (row) => ((row[name] ?? null) === null) === wantNull;
    }
    case 'contains': {
      const needle = filter.value.toLowerCase();
      return (row) => {
        const cell = row[name] ?? null;
        return cell !== null && cellText(cell).toLowerCase().includes(needle);
      };
    }
    case 'in': {
      filter.value.forEach((v, i) => checkValue(v, column, `${where}.value[${i}]`, 'in'));
      const values = filter.value;
      return (row) => {
        const cell = row[name] ?? null;
        return cell !== null && values.some((v) => typeof v === typeof cell && compareCells(cell, v, column.type) === 0);
      };
    }
    default: {
      checkValue(filter.value, column, `${where}.value`, filter.op);
      const value = filter.value;
      const op = filter.op;
      return (row) => {
        const cell = row[name] ?? null;
        if (cell === null || typeof cell !== typeof value) return op === 'ne' && cell !== null;
        const c = compareCells(cell, value, column.type);
        switch (op) {
          case 'eq':
            return c === 0;
          case 'ne':
            return c !== 0;
          case 'lt':
            return c < 0;
          case 'le':
            return c <= 0;
          case 'gt':
            return c > 0;
          case 'ge':
            return c >= 0;
        }
      };
    }
  }
}

function roundFloat(x: number): number {
  return Number(x.toPrecision(15));
}

function aggregateName(aggregate: Aggregate): string {
  if (aggregate.as !== undefined) return aggregate.as;
  if (aggregate.op === 'count') return aggregate.column === undefined ? 'count' : `count_${aggregate.column}`;
  return `${aggregate.op}_${aggregate.column}`;
}

interface CompiledAggregate {
  readonly name: string;
  readonly type: ColumnType;
  compute(rows: readonly Row[]): Cell;
}

function compileAggregate(aggregate: Aggregate, index: number, columns: readonly Column[], displayPath: string): CompiledAggregate {
  const where = `aggregates[${index}]`;
  const name = aggregateName(aggregate);
  if (aggregate.op === 'count') {
    if (aggregate.column === undefined) return { name, type: 'number', compute: (rows) => rows.length };
    const col = findColumn(columns, aggregate.column, `${where}.column`, displayPath).name;
    return { name, type: 'number', compute: (rows) => rows.filter((r) => (r[col] ?? null) !== null).length };
  }
  const column = findColumn(columns, aggregate.column, `${where}.column`, displayPath);
  const col = column.name;
  const present = (rows: readonly Row[]) => rows.map((r) => r[col] ?? null).filter((v): v is Exclude<Cell, null> => v !== null);
  if (aggregate.op === 'sum' || aggregate.op === 'mean') {
    if (column.type !== 'number' && column.type !== 'null') {
      throw new ToolError(
        ERROR_CODES.INVALID_ARGUMENT,
        `${where}: ${aggregate.op} needs a number column, but "${col}" holds ${column.type} values; use count, min or max, or pick a number column.`,
      );
    }
    return {
      name,
      type: 'number',
      compute: (rows) => {
        const values = present(rows) as number[];
        if (values.length === 0) return null;
        const sum = values.reduce((a, b) => a + b, 0);
        return roundFloat(aggregate.op === 'sum' ? sum : sum / values.length);
      },
    };
  }
  if (column.type === 'json' || column.type === 'mixed') {
    throw new ToolError(
      ERROR_CODES.INVALID_ARGUMENT,
      `${where}: ${aggregate.op} needs numbers, dates or text, but "${col}" holds ${column.type} values.`,
    );
  }
  const sign = aggregate.op === 'min' ? -1 : 1;
  return {
    name,
    type: column.type,
    compute: (rows) =>
      present(rows).reduce<Cell>((best, v) => (best === null || sign * compareCells(v, best, column.type) > 0 ? v : best), null),
  };
}

function group(rows: readonly Row[], keys: readonly Column[], aggregates: readonly CompiledAggregate[]): Row[] {
  const groups = new Map<string, { key: Cell[]; rows: Row[] }>();
  for (const row of rows) {
    const key = keys.map((k) => row[k.name] ?? null);
    const id = JSON.stringify(key);
    let entry = groups.get(id);
    if (entry === undefined) {
      entry = { key, rows: [] };
      groups.set(id, entry);
    }
    entry.rows.push(row);
  }
  return [...groups.values()].map(({ key, rows: members }) => {
    const out = Object.create(null) as Record<string, Cell>;
    keys.forEach((k, i) => {
      out[k.name] = key[i] ?? null;
    });
    for (const aggregate of aggregates) out[aggregate.name] = aggregate.compute(members);
    return out;
  });
}

/**
 * Runs a structured query over a parsed table: where (AND) → group_by/aggregates → sort → limit →
 * select. Pure; throws `ToolError` naming the argument (e.g. `where[1].column`) and the fix.
 */
export function queryTable(table: Table, query: Omit<QueryInput, 'path' | 'format' | 'has_header'>, displayPath: string): QueryResult {
  const filters = (query.where ?? []).map((f, i) => compileFilter(f, i, table.columns, displayPath));
  let rows: Row[] = table.rows.filter((row) => filters.every((f) => f(row)));
  const matched = rows.length;

  let columns: readonly Column[] = table.columns;
  const grouping = query.group_by !== undefined || query.aggregates !== undefined;
  if (grouping) {
    const keys = (query.group_by ?? []).map((name, i) => findColumn(table.columns, name, `group_by[${i}]`, displayPath));
    const aggregates = (query.aggregates ?? [{ op: 'count' as const }]).map((a, i) => compileAggregate(a, i, table.columns, displayPath));
    const names = [...keys.map((k) => k.name), ...aggregates.map((a) => a.name)];
    const duplicate = names.find((n, i) => names.indexOf(n) !== i);
    if (duplicate !== undefined) {
      throw new ToolError(
        ERROR_CODES.INVALID_ARGUMENT,
        `aggregates: the result would have two columns named "${duplicate}"; give one of them another name with "as".`,
      );
    }
    rows = keys.length === 0 ? [aggregateRow(rows, aggregates)] : group(rows, keys, aggregates);
    columns = [...keys, ...aggregates.map((a) => ({ name: a.name, type: a.type }))];
  }

  if (query.sort !== undefined) {
    const keys = query.sort.map((s, i) => ({
      column: findColumn(columns, s.column, `sort[${i}].column`, displayPath, grouping ? 'result column' : 'column'),
      sign: s.direction === 'desc' ? -1 : 1,
    }));
    rows = [...rows].sort((a, b) => {
      for (const { column, sign } of keys) {
        const x = a[column.name] ?? null;
        const y = b[column.name] ?? null;
        if (x === null || y === null) {
          if (x === y) continue;
          return x === null ? 1 : -1; // empty cells last, whatever the direction
        }
        const c = compareCells(x, y, column.type);
        if (c !== 0) return sign * c;
      }
      return 0;
    });
  }

  const rowCount = rows.length;
  const limit = query.limit ?? DEFAULT_QUERY_LIMIT;
  rows = rows.slice(0, limit);

  if (query.select !== undefined) {
    const picked = query.select.map((name, i) =>
      findColumn(columns, name, `select[${i}]`, displayPath, grouping ? 'result column' : 'column'),
    );
    rows = rows.map((row) => {
      const out = Object.create(null) as Record<string, Cell>;
      for (const column of picked) out[column.name] = row[column.name] ?? null;
      return out;
    });
    columns = picked;
  } else if (!grouping) {
    rows = rows.map((row) => completeRow(row, columns));
  }

  return { columns, rows, matched_rows: matched, row_count: rowCount, returned: rows.length, truncated: rowCount > rows.length };
}

/** Aggregates over all matching rows, without group_by; over no rows, count is 0 and the others null (as SQL does). */
function aggregateRow(rows: readonly Row[], aggregates: readonly CompiledAggregate[]): Row {
  const out = Object.create(null) as Record<string, Cell>;
  for (const aggregate of aggregates) out[aggregate.name] = aggregate.compute(rows);
  return out;
}
