import { dateValue } from './inferValue.ts';
import type { Cell, ColumnType } from './inferValue.ts';

const KIND_RANK: Record<string, number> = { boolean: 0, number: 1, string: 2, object: 3 };

/** Orders two non-null cells of a column of the given type. */
export function compareCells(a: Cell, b: Cell, type: ColumnType): number {
  if (type === 'date' && typeof a === 'string' && typeof b === 'string') return Math.sign(dateValue(a) - dateValue(b));
  if (typeof a === 'number' && typeof b === 'number') return Math.sign(a - b);
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  const rank = (KIND_RANK[typeof a] ?? 4) - (KIND_RANK[typeof b] ?? 4);
  if (rank !== 0) return Math.sign(rank);
  const sa = JSON.stringify(a);
  const sb = JSON.stringify(b);
  return sa < sb ? -1 : sa > sb ? 1 : 0;
}

/** A cell as text, for `contains` and messages. */
export function cellText(cell: Cell): string {
  if (cell === null) return '';
  if (typeof cell === 'object') return JSON.stringify(cell);
  return String(cell);
}
