// A fast path for the TOML that plugin.toml files are made of, used before smol-toml because
// smol-toml spends ~17 µs and ~24 KB of garbage on a typical 600-byte manifest, and discovery
// parses 10,000 of them at a time. It is a pre-filter, never a judge:
// it returns the data smol-toml's `parse` returns (the same keys in the same order, the same
// arrays, strings and numbers) when it is SURE the document is valid TOML in the subset below, and
// null on anything else, so anything unusual and every invalid document goes through smol-toml,
// which gives the verdict and the error text. A differential test holds the two equal over every
// manifest in the repository and thousands of generated and mutated documents.
//
// One difference in form: tables are plain objects, not smol-toml's null-prototype ones. V8 keeps
// a null-prototype object as a hash table from the start; plain objects built with the same keys
// in the same order share one hidden class, which makes this parser three times faster. The keys
// that would touch a plain object's prototype (`__proto__`, `constructor`) are never set: the fast
// path gives up on them, and smol-toml refuses them.
//
// The subset: `key = value` lines with bare or quoted keys (no dotted keys), `[a.b]` and
// `[[a.b]]` headers that open a table for the first time or append to an array of tables, comments,
// and values that are basic strings (escapes \" \\ \n \t \r only), literal strings, decimal
// integers of up to 15 digits, decimals like `2.5`, booleans, arrays and one-line inline tables
// without a trailing comma. Not in it, so left to smol-toml: multi-line strings, dates and times,
// other number forms (`1_000`, `0x1f`, `1e3`, `+1`, `-0`, inf, nan), other escapes, dotted keys,
// headers that reopen or extend a table defined earlier, a byte order mark, a lone CR, control
// characters, the unsafe keys smol-toml refuses, and nesting deeper than MAX_FAST_DEPTH.

type Table = Record<string, unknown>;

/** Inline nesting (arrays, inline tables) and header path length the fast path takes on. */
export const MAX_FAST_DEPTH = 16;

/**
 * Tables made by headers, and arrays of tables, the fast path keeps track of in one document.
 * They are kept in plain lists (cheaper than sets at manifest sizes), so this also bounds the
 * cost of looking one up; a document with more goes to smol-toml.
 */
export const MAX_FAST_TABLES = 200;

/** Thrown inside the scanner to give up; caught once in {@link parseTomlFast}. */
const BAIL: unique symbol = Symbol('bail');
function bail(): never {
  throw BAIL;
}

const SPACE = 0x20;
const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const HASH = 0x23;
const QUOTE = 0x22;
const APOSTROPHE = 0x27;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const DOT = 0x2e;
const EQUALS = 0x3d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const MINUS = 0x2d;

/** A-Z a-z 0-9 _ - */
function isBareKeyChar(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39) || c === 0x5f || c === MINUS;
}

const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;

/** Control characters TOML forbids in strings and comments (tab is allowed). */
const isControl = (c: number): boolean => (c < SPACE && c !== TAB) || c === 0x7f;

class Scanner {
  pos = 0;
  /** Tables opened by a header (`[a]` or an element of `[[a]]`) or made on the way to one. */
  readonly headerTables: Table[] = [];
  /** Arrays made by `[[a]]` headers (others are values and cannot be appended to). */
  readonly tableArrays: unknown[][] = [];
  /** The last key of the header {@link header} read. */
  lastKey = '';

  constructor(readonly text: string) {}

  code(): number {
    return this.pos < this.text.length ? this.text.charCodeAt(this.pos) : -1;
  }

  skipSpaces(): void {
    for (let c = this.code(); c === SPACE || c === TAB; c = this.code()) this.pos += 1;
  }

  /** A comment (at `#`) up to the line end, which is not consumed. */
  skipComment(): void {
    if (this.code() !== HASH) return;
    const text = this.text;
    let i = this.pos + 1;
    for (; i < text.length; i += 1) {
      const c = text.charCodeAt(i);
      if (c === LF || c === CR) break;
      if (isControl(c)) bail();
    }
    this.pos = i;
  }

  /** The end of a line: spaces, an optional comment, then LF, CRLF or the end of the text. */
  endLine(): void {
    this.skipSpaces();
    this.skipComment();
    const c = this.code();
    if (c === -1) return;
    if (c === LF) {
      this.pos += 1;
      return;
    }
    if (c === CR && this.text.charCodeAt(this.pos + 1) === LF) {
      this.pos += 2;
      return;
    }
    bail();
  }

  /** Spaces, newlines and comments inside an array. */
  skipBlank(): void {
    for (;;) {
      const c = this.code();
      if (c === SPACE || c === TAB || c === LF) this.pos += 1;
      else if (c === CR && this.text.charCodeAt(this.pos + 1) === LF) this.pos += 2;
      else if (c === HASH) this.skipComment();
      else return;
    }
  }

  /** One key: bare, "basic" or 'literal'; the unsafe keys smol-toml refuses are left to it. */
  key(): string {
    const c = this.code();
    let key: string;
    if (c === QUOTE) key = this.basicString();
    else if (c === APOSTROPHE) key = this.literalString();
    else {
      const start = this.pos;
      while (isBareKeyChar(this.code())) this.pos += 1;
      if (this.pos === start) bail();
      key = this.text.slice(start, this.pos);
    }
    if (key === '__proto__' || key === 'constructor') bail();
    return key;
  }

  basicString(): string {
    const text = this.text;
    if (text.charCodeAt(this.pos + 1) === QUOTE && text.charCodeAt(this.pos + 2) === QUOTE) bail(); // """multi-line"""
    let out = '';
    let start = this.pos + 1;
    for (let i = start; i < text.length; i += 1) {
      const c = text.charCodeAt(i);
      if (c === QUOTE) {
        this.pos = i + 1;
        return out + text.slice(start, i);
      }
      if (c === BACKSLASH) {
        const e = text.charCodeAt(i + 1);
        const replacement = e === QUOTE ? '"' : e === BACKSLASH ? '\\' : e === 0x6e ? '\n' : e === 0x74 ? '\t' : e === 0x72 ? '\r' : bail();
        out += text.slice(start, i) + replacement;
        i += 1;
        start = i + 1;
      } else if (isControl(c)) bail();
    }
    return bail(); // unterminated
  }

  literalString(): string {
    const text = this.text;
    if (text.charCodeAt(this.pos + 1) === APOSTROPHE && text.charCodeAt(this.pos + 2) === APOSTROPHE) bail(); // '''multi-line'''
    const start = this.pos + 1;
    for (let i = start; i < text.length; i += 1) {
      const c = text.charCodeAt(i);
      if (c === APOSTROPHE) {
        this.pos = i + 1;
        return text.slice(start, i);
      }
      if (isControl(c)) bail();
    }
    return bail();
  }

  /** `-?(0|[1-9][0-9]*)(\.[0-9]+)?`, at most 15 digits, followed by a value's end. */
  number(): number {
    const text = this.text;
    const start = this.pos;
    let i = start;
    if (text.charCodeAt(i) === MINUS) i += 1;
    const first = i;
    while (isDigit(text.charCodeAt(i))) i += 1;
    if (i === first || (text.charCodeAt(first) === 0x30 && i - first > 1)) bail();
    let digits = i - first;
    if (text.charCodeAt(i) === DOT) {
      const fraction = i + 1;
      i = fraction;
      while (isDigit(text.charCodeAt(i))) i += 1;
      if (i === fraction) bail();
      digits += i - fraction;
    }
    if (digits > 15) bail();
    const end = i < text.length ? text.charCodeAt(i) : -1;
    if (!(
      end === -1 ||
      end === SPACE ||
      end === TAB ||
      end === LF ||
      end === CR ||
      end === COMMA ||
      end === HASH ||
      end === CLOSE_BRACKET ||
      end === CLOSE_BRACE
    ))
      bail();
    const value = Number(text.slice(start, i));
    if (Object.is(value, -0)) bail();
    this.pos = i;
    return value;
  }

  value(depth: number): unknown {
    const c = this.code();
    if (c === QUOTE) return this.basicString();
    if (c === APOSTROPHE) return this.literalString();
    if (c === OPEN_BRACKET) return this.array(depth + 1);
    if (c === OPEN_BRACE) return this.inlineTable(depth + 1);
    if (c === 0x74 && this.text.startsWith('true', this.pos)) {
      this.pos += 4;
      return true;
    }
    if (c === 0x66 && this.text.startsWith('false', this.pos)) {
      this.pos += 5;
      return false;
    }
    if (c === MINUS || isDigit(c)) return this.number();
    return bail();
  }

  array(depth: number): unknown[] {
    if (depth > MAX_FAST_DEPTH) bail();
    this.pos += 1;
    const out: unknown[] = [];
    for (;;) {
      this.skipBlank();
      if (this.code() === CLOSE_BRACKET) break;
      out.push(this.value(depth));
      this.skipBlank();
      const c = this.code();
      if (c === COMMA) this.pos += 1;
      else if (c === CLOSE_BRACKET) break;
      else bail();
    }
    this.pos += 1;
    return out;
  }

  /** `{ a = 1, b = "x" }` on one line, no trailing comma, no dotted keys. */
  inlineTable(depth: number): Table {
    if (depth > MAX_FAST_DEPTH) bail();
    this.pos += 1;
    const out: Table = {} as Table;
    this.skipSpaces();
    if (this.code() === CLOSE_BRACE) {
      this.pos += 1;
      return out;
    }
    for (;;) {
      this.skipSpaces();
      const key = this.key();
      this.skipSpaces();
      if (this.code() !== EQUALS) bail();
      this.pos += 1;
      this.skipSpaces();
      if (Object.hasOwn(out, key)) bail();
      out[key] = this.value(depth);
      this.skipSpaces();
      const c = this.code();
      this.pos += 1;
      if (c === CLOSE_BRACE) return out;
      if (c !== COMMA) bail();
    }
  }

  /**
   * Reads a header's key path (after `[` or `[[`, up to the closing bracket) and walks it from
   * `root`, making missing tables on the way; returns the table that is to hold the last key and
   * leaves that key in `lastKey` (no pair allocated per header).
   */
  header(root: Table): Table {
    let table = root;
    for (let depth = 1; ; depth += 1) {
      if (depth > MAX_FAST_DEPTH) bail();
      this.skipSpaces();
      const key = this.key();
      this.skipSpaces();
      if (this.code() !== DOT) {
        this.lastKey = key;
        return table;
      }
      this.pos += 1;
      table = this.descend(table, key);
    }
  }

  /** One step of a header path: the table `key` names in `table`, made if missing. */
  descend(table: Table, key: string): Table {
    if (!Object.hasOwn(table, key)) {
      const made = {} as Table;
      table[key] = made;
      if (this.headerTables.push(made) > MAX_FAST_TABLES) bail();
      return made;
    }
    const next = table[key];
    if (Array.isArray(next) && this.tableArrays.includes(next)) return next[next.length - 1] as Table;
    if (this.headerTables.includes(next as Table)) return next as Table;
    return bail(); // a value, an inline table or a plain array: smol-toml decides
  }

  document(): Table {
    const root = {} as Table;
    const text = this.text;
    let table = root;
    while (this.pos < text.length) {
      this.skipSpaces();
      const c = this.code();
      if (c === -1) break;
      if (c === HASH || c === LF || c === CR) {
        this.endLine();
        continue;
      }
      if (c === OPEN_BRACKET) {
        const isArray = text.charCodeAt(this.pos + 1) === OPEN_BRACKET;
        this.pos += isArray ? 2 : 1;
        const parent = this.header(root);
        const last = this.lastKey;
        if (this.code() !== CLOSE_BRACKET) bail();
        this.pos += 1;
        if (isArray) {
          if (this.code() !== CLOSE_BRACKET) bail();
          this.pos += 1;
        }
        this.endLine();
        const made = {} as Table;
        if (isArray) {
          if (!Object.hasOwn(parent, last)) {
            const list: unknown[] = [];
            parent[last] = list;
            if (this.tableArrays.push(list) > MAX_FAST_TABLES) bail();
          }
          const list = parent[last];
          if (!Array.isArray(list) || !this.tableArrays.includes(list)) bail();
          list.push(made);
        } else {
          // A table opened before (explicitly or on the way to another): valid only in some
          // cases, which smol-toml sorts out.
          if (Object.hasOwn(parent, last)) bail();
          parent[last] = made;
        }
        if (this.headerTables.push(made) > MAX_FAST_TABLES) bail();
        table = made;
        continue;
      }
      const key = this.key();
      this.skipSpaces();
      if (this.code() !== EQUALS) bail(); // a dotted key, or not a key/value line
      this.pos += 1;
      this.skipSpaces();
      if (Object.hasOwn(table, key)) bail();
      table[key] = this.value(0);
      this.endLine();
    }
    return root;
  }
}

/**
 * The document as smol-toml's `parse` would return it, or null when the text is outside the
 * subset this handles (which includes every invalid document): then call smol-toml.
 */
export function parseTomlFast(text: string): Record<string, unknown> | null {
  if (text.charCodeAt(0) === 0xfeff) return null;
  try {
    return new Scanner(text).document();
  } catch (error) {
    if (error === BAIL) return null;
    throw error;
  }
}
