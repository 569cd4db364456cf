/** What a column holds. `json` is a nested object or array (JSON sources only); `mixed` is several kinds (JSON sources only). */
export type ColumnType = 'number' | 'boolean' | 'date' | 'string' | 'null' | 'json' | 'mixed';

/** A cell after type inference. Dates stay ISO strings; their column's type says `date`. */
export type Cell = string | number | boolean | null | readonly unknown[] | { readonly [key: string]: unknown };

// A decimal number; no leading zeros before more digits (so "007" and ZIP codes stay text), no thousands separators.
const NUMBER = /^[+-]?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$|^[+-]?\.\d+(?:[eE][+-]?\d+)?$/;
// ISO 8601 calendar date, optionally with a time and zone.
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

/** True for a valid ISO 8601 date or date-time string (the calendar date must exist). */
export function isIsoDate(text: string): boolean {
  const m = ISO_DATE.exec(text);
  if (m === null) return false;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (month < 1 || month > 12 || day < 1) return false;
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day > daysInMonth) return false;
  if (m[4] !== undefined && (Number(m[4]) > 23 || Number(m[5]) > 59 || Number(m[6] ?? 0) > 59)) return false;
  return true;
}

/** Milliseconds since the epoch for an ISO date (a date without zone is taken as UTC). */
export function dateValue(text: string): number {
  const withZone =
    /[T ]\d{2}:\d{2}/.test(text) && !/(Z|[+-]\d{2}:?\d{2})$/.test(text) ? `${text.replace(' ', 'T')}Z` : text.replace(' ', 'T');
  return Date.parse(withZone);
}

/** The kind of one text cell: empty → null, then number, boolean, ISO date, string. */
export function inferTextKind(text: string): ColumnType {
  const value = text.trim();
  if (value === '') return 'null';
  if (NUMBER.test(value) && Number.isFinite(Number(value))) return 'number';
  const lower = value.toLowerCase();
  if (lower === 'true' || lower === 'false') return 'boolean';
  if (isIsoDate(value)) return 'date';
  return 'string';
}

/** The kind of a JSON value. */
export function jsonKind(value: unknown): ColumnType {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'number') return 'number';
  if (typeof value === 'boolean') return 'boolean';
  if (typeof value === 'string') return isIsoDate(value) ? 'date' : 'string';
  return 'json';
}

/**
 * One type for a column from the kinds of its non-null cells. Text sources: a column whose cells
 * disagree is `string` (all cells kept as text). JSON sources: dates mixed with strings are
 * `string`; other disagreements are `mixed`.
 */
export function combineKinds(kinds: ReadonlySet<ColumnType>, source: 'text' | 'json'): ColumnType {
  const present = [...kinds].filter((k) => k !== 'null');
  if (present.length === 0) return 'null';
  if (present.length === 1) return present[0]!;
  if (present.every((k) => k === 'string' || k === 'date')) return 'string';
  return source === 'text' ? 'string' : 'mixed';
}

/** Converts a text cell to the value its column's type calls for. */
export function convertText(text: string, type: ColumnType): Cell {
  const value = text.trim();
  if (value === '') return null;
  switch (type) {
    case 'number':
      return Number(value);
    case 'boolean':
      return value.toLowerCase() === 'true';
    case 'date':
      return value;
    default:
      return text;
  }
}
