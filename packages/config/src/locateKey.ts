/** A source position, 1-based. */
export interface SourcePosition {
  readonly line: number;
  readonly column: number;
}

/** Finds the line that defines a key path, or `undefined`. */
export type KeyLocator = (path: ReadonlyArray<string | number>) => SourcePosition | undefined;

interface KeyRecord {
  readonly path: ReadonlyArray<string | number>;
  readonly line: number;
  readonly column: number;
}

interface ScanState {
  /** Inside a multi-line string: its delimiter. */
  multiline: '"""' | "'''" | null;
  /** Open brackets and braces of a value that spans lines. */
  depth: number;
}

/**
 * Builds a locator over TOML text. It runs only on the error path (when a problem needs a line),
 * so the happy path never pays for it. It reads table headers and `key =` lines, skipping
 * comments, multi-line strings and values that span lines. For a path it returns the line that
 * defines exactly that key; else the first line that defines something inside it (a longer
 * dotted key or header); else the line of the closest enclosing key or header.
 */
export function createKeyLocator(text: string): KeyLocator {
  let index: Map<string | number, KeyRecord[]> | undefined;
  return (path) => {
    index ??= groupByFirstKey(scanKeys(text));
    const group = path.length === 0 ? undefined : index.get(path[0] ?? '');
    return group === undefined ? undefined : locate(group, path);
  };
}

/** Records grouped by their first key, so a lookup scans only its own top-level table. */
function groupByFirstKey(records: readonly KeyRecord[]): Map<string | number, KeyRecord[]> {
  const groups = new Map<string | number, KeyRecord[]>();
  for (const record of records) {
    const first = record.path[0] ?? '';
    const group = groups.get(first);
    if (group === undefined) groups.set(first, [record]);
    else group.push(record);
  }
  return groups;
}

function locate(records: readonly KeyRecord[], path: ReadonlyArray<string | number>): SourcePosition | undefined {
  let inside: KeyRecord | undefined;
  let enclosing: KeyRecord | undefined;
  for (const record of records) {
    const common = commonPrefix(record.path, path);
    if (common === path.length && common === record.path.length) return position(record);
    if (common === path.length) inside ??= record;
    else if (common === record.path.length && (enclosing === undefined || record.path.length > enclosing.path.length)) {
      enclosing = record;
    }
  }
  const best = inside ?? enclosing;
  return best === undefined ? undefined : position(best);
}

function commonPrefix(a: ReadonlyArray<string | number>, b: ReadonlyArray<string | number>): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

function position(record: KeyRecord): SourcePosition {
  return { line: record.line, column: record.column };
}

function scanKeys(text: string): KeyRecord[] {
  const records: KeyRecord[] = [];
  const arrayIndex: ArrayTrie = { children: new Map(), index: -1 };
  const state: ScanState = { multiline: null, depth: 0 };
  let table: Array<string | number> = [];
  const lines = text.split('\n');
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n] ?? '';
    if (state.multiline !== null || state.depth > 0) {
      scanValue(line, 0, state);
      continue;
    }
    let i = skipSpace(line, 0);
    const c = line[i];
    if (c === undefined || c === '#' || c === '\r') continue;
    if (c === '[') {
      const isArray = line[i + 1] === '[';
      const key = parseKey(line, i + (isArray ? 2 : 1), ']');
      if (key === null) continue;
      table = tablePath(key.parts, isArray, arrayIndex);
      records.push({ path: table, line: n + 1, column: i + 1 });
      continue;
    }
    const key = parseKey(line, i, '=');
    if (key === null) {
      scanValue(line, i, state);
      continue;
    }
    records.push({ path: [...table, ...key.parts], line: n + 1, column: i + 1 });
    i = key.end;
    scanValue(line, i, state);
  }
  return records;
}

/** Arrays of tables seen so far, as a trie of key parts, each with its current index. */
interface ArrayTrie {
  readonly children: Map<string, ArrayTrie>;
  index: number;
}

/** The full path of a table header, inserting the current index of every array of tables on the way. */
function tablePath(parts: readonly string[], isArray: boolean, root: ArrayTrie): Array<string | number> {
  const path: Array<string | number> = [];
  let node: ArrayTrie | undefined = root;
  for (let k = 0; k < parts.length; k++) {
    const part = parts[k] ?? '';
    path.push(part);
    if (node === undefined) continue; // no array of tables below here
    let child: ArrayTrie | undefined = node.children.get(part);
    if (child === undefined && isArray) {
      child = { children: new Map(), index: -1 };
      node.children.set(part, child);
    }
    node = child;
    if (node === undefined) continue;
    if (isArray && k === parts.length - 1) node.index++;
    if (node.index >= 0) path.push(node.index);
  }
  return path;
}

function skipSpace(line: string, i: number): number {
  while (line[i] === ' ' || line[i] === '\t') i++;
  return i;
}

/** Parses a (dotted) key that ends at `end`; returns its parts and the offset after `end`. */
function parseKey(line: string, start: number, end: '=' | ']'): { parts: string[]; end: number } | null {
  const parts: string[] = [];
  let i = start;
  for (;;) {
    i = skipSpace(line, i);
    const c = line[i];
    if (c === '"') {
      let j = i + 1;
      while (j < line.length && line[j] !== '"') j += line[j] === '\\' ? 2 : 1;
      if (j >= line.length) return null;
      parts.push(unescapeBasic(line.slice(i + 1, j)));
      i = j + 1;
    } else if (c === "'") {
      const j = line.indexOf("'", i + 1);
      if (j === -1) return null;
      parts.push(line.slice(i + 1, j));
      i = j + 1;
    } else {
      let j = i;
      while (j < line.length && isBareKeyChar(line.charCodeAt(j))) j++;
      if (j === i) return null;
      parts.push(line.slice(i, j));
      i = j;
    }
    i = skipSpace(line, i);
    if (line[i] === '.') {
      i++;
      continue;
    }
    if (line[i] === end) return { parts, end: i + 1 };
    return null;
  }
}

function isBareKeyChar(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39) || c === 0x5f || c === 0x2d;
}

function unescapeBasic(raw: string): string {
  if (!raw.includes('\\')) return raw;
  try {
    return JSON.parse(
      `"${raw.replace(/\\U([0-9A-Fa-f]{8})/g, (_m, hex: string) => String.fromCodePoint(Number.parseInt(hex, 16)).replace(/"/g, '\\"'))}"`,
    ) as string;
  } catch {
    return raw;
  }
}

/** Follows strings, brackets and comments through a value so that lines inside it are not read as keys. */
function scanValue(line: string, start: number, state: ScanState): void {
  let i = start;
  while (i < line.length) {
    if (state.multiline !== null) {
      const close = findClose(line, i, state.multiline);
      if (close === -1) return;
      i = close;
      state.multiline = null;
      continue;
    }
    const c = line[i];
    if (c === '#') return;
    if (c === '"' || c === "'") {
      const triple = c.repeat(3);
      if (line.startsWith(triple, i)) {
        state.multiline = triple as '"""' | "'''";
        i += 3;
        continue;
      }
      let j = i + 1;
      while (j < line.length && line[j] !== c) j += c === '"' && line[j] === '\\' ? 2 : 1;
      i = j + 1;
      continue;
    }
    if (c === '[' || c === '{') state.depth++;
    else if ((c === ']' || c === '}') && state.depth > 0) state.depth--;
    i++;
  }
}

/** Offset just past the closing delimiter of a multi-line string, or -1 when it does not close on this line. */
function findClose(line: string, from: number, delimiter: '"""' | "'''"): number {
  let j = line.indexOf(delimiter, from);
  while (j !== -1) {
    let backslashes = 0;
    if (delimiter === '"""') for (let k = j - 1; k >= from && line[k] === '\\'; k--) backslashes++;
    if (backslashes % 2 === 0) {
      let end = j + 3;
      // Up to two quotes right before the delimiter belong to the string's content.
      while (end - j < 5 && line[end] === delimiter[0]) end++;
      return end;
    }
    j = line.indexOf(delimiter, j + 1);
  }
  return -1;
}
