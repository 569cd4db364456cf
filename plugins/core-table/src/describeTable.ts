import { cellText, compareCells } from './compareCells.ts';
import type { Cell, ColumnType } from './inferValue.ts';
import type { Table } from './parseTable.ts';

/** Distinct values counted per column before `distinct_capped` is set. */
export const DISTINCT_CAP = 1000;

/** Statistics of one column. */
export interface ColumnStats {
  readonly name: string;
  readonly type: ColumnType;
  readonly nulls: number;
  /** Distinct non-null values, counted up to `DISTINCT_CAP`. */
  readonly distinct: number;
  readonly distinct_capped: boolean;
  /** Numbers, dates and text: smallest and largest (text by code point). */
  readonly min?: Cell;
  readonly max?: Cell;
  /** Numbers only. */
  readonly mean?: number;
  /** Text only: shortest and longest value, in characters. */
  readonly min_length?: number;
  readonly max_length?: number;
  /** Text and booleans: the most frequent values (up to 5), with counts. */
  readonly top_values?: ReadonlyArray<{ readonly value: Cell; readonly count: number }>;
}

/** The non-null cells of every column, in row order, from one pass over each row's own cells. */
function presentCells(table: Table): Map<string, Array<Exclude<Cell, null>>> {
  const byColumn = new Map(table.columns.map(({ name }) => [name, [] as Array<Exclude<Cell, null>>]));
  for (const row of table.rows) {
    for (const name of Object.keys(row)) {
      const value = row[name] ?? null;
      if (value !== null) byColumn.get(name)?.push(value);
    }
  }
  return byColumn;
}

/**
 * Per-column types, null counts, distinct counts and basic statistics. Pure. Costs the cells the
 * table holds, not rows × columns, so a wide sparse table is as cheap as its file.
 */
export function describeTable(table: Table): ColumnStats[] {
  const cells = presentCells(table);
  return table.columns.map(({ name, type }) => {
    const present = cells.get(name) ?? [];
    const counts = new Map<string, { value: Cell; count: number }>();
    let capped = false;
    for (const value of present) {
      const key = typeof value === 'string' ? `s${value}` : `j${JSON.stringify(value)}`;
      const entry = counts.get(key);
      if (entry !== undefined) entry.count += 1;
      else if (counts.size < DISTINCT_CAP) counts.set(key, { value, count: 1 });
      else capped = true;
    }
    const stats: Record<string, unknown> = {
      name,
      type,
      nulls: table.rows.length - present.length,
      distinct: counts.size,
      distinct_capped: capped,
    };
    if ((type === 'number' || type === 'date' || type === 'string') && present.length > 0) {
      let min = present[0]!;
      let max = present[0]!;
      for (const v of present) {
        if (compareCells(v, min, type) < 0) min = v;
        if (compareCells(v, max, type) > 0) max = v;
      }
      stats.min = min;
      stats.max = max;
    }
    if (type === 'number' && present.length > 0) {
      stats.mean = Number(((present as number[]).reduce((a, b) => a + b, 0) / present.length).toPrecision(15));
    }
    if (type === 'string' && present.length > 0) {
      const lengths = present.map((v) => cellText(v).length);
      stats.min_length = lengths.reduce((a, b) => Math.min(a, b));
      stats.max_length = lengths.reduce((a, b) => Math.max(a, b));
    }
    if ((type === 'string' || type === 'boolean') && present.length > 0) {
      stats.top_values = [...counts.values()]
        .sort((a, b) => b.count - a.count || compareCells(a.value ?? '', b.value ?? '', type))
        .slice(0, 5);
    }
    return stats as unknown as ColumnStats;
  });
}
