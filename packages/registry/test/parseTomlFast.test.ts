import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { MAX_MANIFEST_DEPTH, parseManifest } from '../src/parse.ts';
import { MAX_FAST_DEPTH, MAX_FAST_TABLES, parseTomlFast } from '../src/parseTomlFast.ts';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** smol-toml as parseManifest calls it: the data, or null when it refuses the document. */
function reference(text: string): unknown {
  try {
    return parse(text, { maxDepth: MAX_MANIFEST_DEPTH, unsafeKeyBehaviour: 'throw' });
  } catch {
    return null;
  }
}

/**
 * The data, with every detail but the tables' prototypes (null in smol-toml, plain in the fast
 * path): key order, array order, types, -0, exact numbers.
 */
function dump(value: unknown): string {
  if (typeof value === 'number') return Object.is(value, -0) ? 'number:-0' : `number:${value}`;
  if (value === null || typeof value !== 'object') return `${typeof value}:${JSON.stringify(value)}`;
  if (Array.isArray(value)) return `[${value.map(dump).join(',')}]`;
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== null && proto !== Object.prototype)
    return `${(proto as { constructor: { name: string } }).constructor.name}:${String(value)}`;
  return `{${Reflect.ownKeys(value)
    .map((k) => `${JSON.stringify(String(k))}=${dump((value as Record<string | symbol, unknown>)[k])}`)
    .join(',')}}`;
}

/** The property every test below rests on: the fast path gives up, or gives smol-toml's data. */
function expectAgrees(text: string): 'fast' | 'fallback' {
  const fast = parseTomlFast(text);
  if (fast === null) return 'fallback';
  const slow = reference(text);
  expect(slow, `fast path accepted a document smol-toml refuses:\n${text}`).not.toBeNull();
  expect(dump(fast), text).toBe(dump(slow));
  return 'fast';
}

const MANIFEST = `schema_version = 1
id = "git-helper"   # trailing comment
name = 'Git helper'
version = "0.3.0"
kind = "toolset"
description = "Quotes \\" and \\\\ and\\ttabs\\nand lines; unicode: héllo ✓ 𝄞"
side_effects = false
capabilities = ["fs.read", "proc.spawn",]
requires_env = [
  "GIT_TOKEN", # a comment inside an array
  'OTHER',
]

[runtime]
type = "process"
command = "python3"
args = ["main.py", "--serve"]
timeout_seconds = 2.5
max_restarts = 0
restart_delay_seconds = 0

[runtime.env]
MODE = "fast"

[[tools]]
name = "status"
description = "Show git status"
input_schema = { type = "object", properties = { short = { type = "boolean" }, "with space" = { type = "string" } } }

[[tools]]
name = "diff"
description = "Show a diff"

[tools.input_schema]
type = "object"
required = ["path"]

[tools.input_schema.properties.path]
type = "string"
pattern = '^[a-z]+\\.txt$'
minLength = -3
`;

describe('parseTomlFast', () => {
  it('parses the common plugin.toml shapes to the data smol-toml gives', () => {
    expect(expectAgrees(MANIFEST)).toBe('fast');
    expect(expectAgrees(MANIFEST.replaceAll('\n', '\r\n'))).toBe('fast');
    expect(expectAgrees('')).toBe('fast');
    expect(expectAgrees('# only a comment')).toBe('fast');
    expect(expectAgrees('a = 1\n[t]\n\n  b = [ [1, 2], [], ["x", { y = -3 }] ]\n[[t.list]]\n[[t.list]]\nc = true\n')).toBe('fast');
  });

  it('takes every bundled plugin.toml and the benchmark manifests on the fast path', () => {
    const dirs = readdirSync(join(repo, 'plugins'));
    expect(dirs.length).toBeGreaterThanOrEqual(10);
    for (const dir of dirs) {
      const text = readFileSync(join(repo, 'plugins', dir, 'plugin.toml'), 'utf8');
      expect(expectAgrees(text), dir).toBe('fast');
    }
    // What smol-toml's own stringify writes: the shape bench/discovery generates.
    const generated = stringify({
      schema_version: 1,
      id: 'ext-1',
      runtime: { type: 'process', command: 'python3', args: ['main.py'] },
      tools: [{ name: 'status', input_schema: { type: 'object', properties: { short: { type: 'boolean' } } } }],
    });
    expect(expectAgrees(generated)).toBe('fast');
  });

  it.each([
    ['a dotted key', 'a.b = 1'],
    ['a multi-line basic string', 'a = """x"""'],
    ['a multi-line literal string', "a = '''x'''"],
    ['a unicode escape', 'a = "\\u00e9"'],
    ['the TOML 1.1 escape \\e', 'a = "\\e"'],
    ['a date', 'a = 1979-05-27'],
    ['a local time', 'a = 07:32:00'],
    ['an underscore in a number', 'a = 1_000'],
    ['a hex number', 'a = 0x1f'],
    ['an exponent', 'a = 1e3'],
    ['a plus sign', 'a = +1'],
    ['minus zero', 'a = -0'],
    ['minus zero point zero', 'a = -0.0'],
    ['16 digits', 'a = 1234567890123456'],
    ['inf', 'a = inf'],
    ['nan', 'a = nan'],
    ['a multi-line inline table', 'a = { b = 1,\n c = 2 }'],
    ['an inline table with a trailing comma', 'a = { b = 1, }'],
    ['a byte order mark', '\uFEFFa = 1'],
    ['a table reopened after an implicit one', '[a.b]\nx = 1\n[a]\ny = 2'],
  ])('leaves %s to smol-toml', (_what, text) => {
    expect(parseTomlFast(text)).toBeNull();
    expectAgrees(text);
  });

  it.each([
    ['a duplicate key', 'a = 1\na = 2'],
    ['a duplicate key in an inline table', 'a = { b = 1, b = 2 }'],
    ['a duplicate table', '[a]\n[a]'],
    ['a table over a value', 'a = 1\n[a]'],
    ['a table inside an inline table', 'a = { b = 1 }\n[a.c]'],
    ['an array of tables over a plain array', 'a = [1]\n[[a]]'],
    ['an array of tables over a table', '[a]\n[[a]]'],
    ['a table over an array of tables', '[[a]]\n[a]'],
    ['a key after a value on one line', 'a = 1 b = 2'],
    ['an unterminated string', 'a = "x'],
    ['an unterminated array', 'a = [1, 2'],
    ['a missing value', 'a ='],
    ['a missing equals sign', 'a 1'],
    ['a leading zero', 'a = 01'],
    ['a bare word', 'a = yes'],
    ['a lone carriage return', 'a = 1\rb = 2'],
    ['a control character in a string', 'a = "x\u0001y"'],
    ['a control character in a comment', 'a = 1 # x\u0007'],
    ['DEL in a string', 'a = "x\u007fy"'],
    ['a newline in a string', 'a = "x\ny"'],
    ['an unknown escape', 'a = "\\q"'],
    ['an empty bare key', ' = 1'],
    ['an unsafe key', '__proto__ = 1'],
    ['an unsafe quoted key', '"__proto__" = { polluted = true }'],
    ['an unsafe table name', '[__proto__]\npolluted = true'],
    ['constructor as a key', '[a]\nconstructor = 1'],
    ['a header with a space between brackets', '[ [a] ]'],
    ['a header with no closing bracket', '[a\nb = 1'],
    ['text after a header', '[a] b = 1'],
  ])('never accepts %s', (_what, text) => {
    expect(parseTomlFast(text)).toBeNull();
    expectAgrees(text);
  });

  it('never sets a prototype, however the unsafe key is spelled', () => {
    for (const text of [
      '__proto__ = 1',
      "'__proto__' = 1",
      '[a.__proto__]',
      '[["__proto__"]]',
      'a = { __proto__ = { x = 1 } }',
      'a = [{ constructor = 1 }]',
    ]) {
      expect(parseTomlFast(text), text).toBeNull();
    }
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();
  });

  it('gives up on nesting past MAX_FAST_DEPTH, which smol-toml still takes at the manifest limit', () => {
    expect(MAX_FAST_DEPTH).toBeLessThan(MAX_MANIFEST_DEPTH);
    const nested = (n: number): string => `a = ${'['.repeat(n)}${']'.repeat(n)}`;
    expect(expectAgrees(nested(MAX_FAST_DEPTH))).toBe('fast');
    expect(parseTomlFast(nested(MAX_FAST_DEPTH + 1))).toBeNull();
    expect(reference(nested(MAX_FAST_DEPTH + 1))).not.toBeNull();
    const header = (n: number): string => `[${Array.from({ length: n }, (_, i) => `k${i}`).join('.')}]\nx = 1`;
    expect(expectAgrees(header(MAX_FAST_DEPTH))).toBe('fast');
    expect(parseTomlFast(header(MAX_FAST_DEPTH + 1))).toBeNull();
  });

  it('leaves a document with more than MAX_FAST_TABLES tables to smol-toml, so lookups stay bounded', () => {
    const tables = (n: number): string => Array.from({ length: n }, (_, i) => `[t${i}]\nx = ${i}\n`).join('');
    expect(expectAgrees(tables(MAX_FAST_TABLES))).toBe('fast');
    expect(parseTomlFast(tables(MAX_FAST_TABLES + 1))).toBeNull();
    const arrays = (n: number): string => Array.from({ length: n }, (_, i) => `[[a${i}]]\n`).join('');
    expect(parseTomlFast(arrays(MAX_FAST_TABLES + 1))).toBeNull();
    expect(reference(arrays(MAX_FAST_TABLES + 1))).not.toBeNull();
  });

  it('agrees with smol-toml on thousands of mutated documents', () => {
    // A seeded generator: the same cases on every run, so a failure reproduces.
    let seed = 0x2545f491;
    const random = (n: number): number => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return (seed >>> 0) % n;
    };
    const pieces = [
      '[',
      ']',
      '[[',
      ']]',
      '{',
      '}',
      '"',
      "'",
      '\\',
      '=',
      '.',
      ',',
      '#',
      '\n',
      '\r',
      '\r\n',
      '\t',
      ' ',
      '-',
      '_',
      '0',
      '1',
      '9',
      'a',
      'é',
      '\u0000',
      '\u007f',
      'true',
      '"""',
      '__proto__',
      '1.5',
      '-0',
      'tools',
      'x = 1\n',
    ];
    const seeds = [
      MANIFEST,
      ...readdirSync(join(repo, 'plugins')).map((dir) => readFileSync(join(repo, 'plugins', dir, 'plugin.toml'), 'utf8')),
    ];
    const counts = { fast: 0, fallback: 0 };
    for (let n = 0; n < 6000; n += 1) {
      let text = seeds[random(seeds.length)]!;
      for (let edits = 1 + random(3); edits > 0; edits -= 1) {
        const at = random(text.length + 1);
        const op = random(4);
        if (op === 0) text = text.slice(0, at) + pieces[random(pieces.length)]! + text.slice(at);
        else if (op === 1) text = text.slice(0, at) + text.slice(at + 1 + random(4));
        else if (op === 2) {
          // Repeat a line: duplicate keys and headers.
          const start = text.lastIndexOf('\n', at - 1) + 1;
          const end = text.indexOf('\n', at);
          const line = text.slice(start, end === -1 ? text.length : end + 1);
          text = text.slice(0, start) + line + (line.endsWith('\n') ? '' : '\n') + text.slice(start);
        } else text = text.slice(0, at) + pieces[random(pieces.length)]! + text.slice(at + 1);
      }
      counts[expectAgrees(text)] += 1;
    }
    // Both paths were exercised, so the agreement above means something.
    expect(counts.fast).toBeGreaterThan(600);
    expect(counts.fallback).toBeGreaterThan(600);
  });

  it('lets parseManifest give the same manifest and the same errors either way', () => {
    const bytes = new TextEncoder().encode(MANIFEST);
    const viaFast = parseManifest(bytes);
    expect(viaFast.errors).toEqual([]);
    // The same document made to need smol-toml (a unicode escape is outside the fast subset).
    const slowText = MANIFEST.replace('héllo', 'h\\u00e9llo');
    expect(parseTomlFast(slowText)).toBeNull();
    const viaSlow = parseManifest(new TextEncoder().encode(slowText));
    expect(JSON.stringify(viaSlow.manifest)).toBe(JSON.stringify(viaFast.manifest));
    // An invalid manifest the fast parser reads still gets zod's wording.
    const wrongKind = parseManifest(new TextEncoder().encode(MANIFEST.replace('kind = "toolset"', 'kind = "gadget"')));
    expect(wrongKind.manifest).toBeNull();
    expect(wrongKind.errors.join('\n')).toMatch(/^kind: /m);
    // A TOML error still carries smol-toml's line and column.
    const broken = parseManifest(new TextEncoder().encode('id = "x"\nid = "y"\n'));
    expect(broken.errors[0]).toMatch(/^line 2, column \d+: TOML syntax error: /);
  });
});
