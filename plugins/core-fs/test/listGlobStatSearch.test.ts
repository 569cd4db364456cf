import { mkdirSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GlobInputSchema, ListInputSchema, SearchInputSchema, globTool, listTool, searchTool, statTool } from '../src/index.ts';
import { failureOf, makeFsFixture } from './fsFixture.ts';
import type { FsFixture } from './fsFixture.ts';

let fx: FsFixture;

beforeEach(() => {
  fx = makeFsFixture();
  const tree: Record<string, string | Buffer> = {
    'README.md': '# Demo\nTODO: write docs\n',
    'src/app.ts': 'import { x } from "./x";\n// todo later\nexport const answer = 42;\n',
    'src/x.ts': 'export const x = "TODO";\n',
    'src/deep/more.ts': 'const y = 1;\n',
    '.hidden/h.md': 'TODO hidden\n',
    'node_modules/dep/index.js': 'TODO in a dependency\n',
    'bin/blob.bin': Buffer.from([0x54, 0x4f, 0x44, 0x4f, 0x00, 0x01]),
  };
  for (const [name, content] of Object.entries(tree)) {
    mkdirSync(join(fx.ws, name, '..'), { recursive: true });
    writeFileSync(join(fx.ws, name), content);
  }
  mkdirSync(fx.outside);
  writeFileSync(join(fx.outside, 'secret.md'), 'TODO secret\n');
  symlinkSync(fx.outside, join(fx.ws, 'out'));
  symlinkSync(join(fx.outside, 'secret.md'), join(fx.ws, 'leak.md'));
});
afterEach(() => fx.remove());

describe('list', () => {
  it('bounds depth', () => {
    expect(ListInputSchema.safeParse({}).success).toBe(true);
    expect(ListInputSchema.safeParse({ depth: 0 }).success).toBe(false);
    expect(ListInputSchema.safeParse({ depth: 6 }).success).toBe(false);
  });

  it('lists one level by default, symlinks shown but not followed', async () => {
    expect(await listTool.run({}, fx.context())).toEqual({
      path: '.',
      entries: [
        { path: '.hidden', type: 'directory' },
        { path: 'README.md', type: 'file', size: 24 },
        { path: 'bin', type: 'directory' },
        { path: 'leak.md', type: 'symlink' },
        { path: 'node_modules', type: 'directory' },
        { path: 'out', type: 'symlink' },
        { path: 'src', type: 'directory' },
      ],
      truncated: false,
    });
  });

  it('descends to the requested depth', async () => {
    expect(await listTool.run({ path: 'src', depth: 2 }, fx.context())).toEqual({
      path: 'src',
      entries: [
        { path: 'src/app.ts', type: 'file', size: 65 },
        { path: 'src/deep', type: 'directory' },
        { path: 'src/deep/more.ts', type: 'file', size: 13 },
        { path: 'src/x.ts', type: 'file', size: 25 },
      ],
      truncated: false,
    });
  });

  it('caps the number of entries', async () => {
    mkdirSync(join(fx.ws, 'many'));
    for (let i = 0; i < 1005; i++) writeFileSync(join(fx.ws, 'many', `f${String(i).padStart(4, '0')}`), '');
    const out = await listTool.run({ path: 'many' }, fx.context());
    expect(out.entries.length).toBe(1000);
    expect(out.truncated).toBe(true);
  });

  it('says when the path is a file', async () => {
    expect(await failureOf(fx, () => listTool.run({ path: 'README.md' }, fx.context()))).toEqual({
      code: 'INVALID_ARGUMENT',
      message: 'path: "README.md" is a file, not a folder. Use core-fs.stat or core-fs.read for a file.',
    });
  });
});

describe('glob', () => {
  it('requires a pattern', () => {
    expect(GlobInputSchema.safeParse({ pattern: '**/*.ts' }).success).toBe(true);
    expect(GlobInputSchema.safeParse({ pattern: '' }).success).toBe(false);
    expect(GlobInputSchema.safeParse({}).success).toBe(false);
  });

  it('matches files, skipping node_modules and symlinked folders and files that lead out', async () => {
    expect(await globTool.run({ pattern: '**/*.md' }, fx.context())).toEqual({ files: ['.hidden/h.md', 'README.md'], truncated: false });
    expect(await globTool.run({ pattern: '**/*.ts', path: 'src' }, fx.context())).toEqual({
      files: ['src/app.ts', 'src/deep/more.ts', 'src/x.ts'],
      truncated: false,
    });
  });

  it('refuses patterns that could leave the root', async () => {
    expect(await failureOf(fx, () => globTool.run({ pattern: '../outside/*' }, fx.context()))).toEqual({
      code: 'PATH_NOT_ALLOWED',
      message: 'pattern: "../outside/*" contains "..", which could leave the root. Set path to the folder to search from instead.',
    });
    expect(await failureOf(fx, () => globTool.run({ pattern: '/etc/*' }, fx.context()))).toEqual({
      code: 'PATH_NOT_ALLOWED',
      message: 'pattern: "/etc/*" is absolute. Patterns are relative to path (default: the root), e.g. "src/**/*.ts".',
    });
    expect((await failureOf(fx, () => globTool.run({ pattern: '*', path: 'out' }, fx.context()))).code).toBe('PATH_NOT_ALLOWED');
  });

  it('refuses patterns that could take minutes to match, saying how to fix them', async () => {
    // A long run of one letter is what makes a failing backtracking match explode.
    writeFileSync(join(fx.ws, 'a'.repeat(30)), '');
    const refusal = async (pattern: string) => (await failureOf(fx, () => globTool.run({ pattern }, fx.context()))).message;
    const fix =
      'Use fewer wildcards (e.g. "**/*.test.ts" rather than "**/*a*b*c*d*") and narrow the paths you get back yourself, or search file contents with core-fs.search.';
    expect(await failureOf(fx, () => globTool.run({ pattern: '*a*a*a*a*a*a*a*b' }, fx.context()))).toEqual({
      code: 'INVALID_ARGUMENT',
      message: `pattern: "*a*a*a*a*a*a*a*b" has 8 "*" wildcards in the path segment "*a*a*a*a*a*a*a*b"; at most 3 are allowed in one segment, because each one more multiplies the matching time (such a pattern can take minutes). ${fix}`,
    });
    expect(await refusal('*a*/*a*/*a*/b')).toBe(
      `pattern: "*a*/*a*/*a*/b" has 6 wildcards ("*" runs and "**" segments); at most 4 are allowed in one pattern, because each one more multiplies the matching time (such a pattern can take minutes). ${fix}`,
    );
    expect(await refusal('**/a/**/a/**/b')).toBe(
      'pattern: "**/a/**/a/**/b" has 3 "**" segments; at most 2 are allowed, because each one more multiplies the matching time in deep folders. Set path to the folder to start from and use one "**", e.g. "**/*.ts".',
    );
    expect(await refusal('+(a|aa)b')).toBe(
      'pattern: "+(a|aa)b" uses a group "(…)". Groups and extglobs such as "+(a|b)" or "@(x)" are not accepted, because their repeats can take minutes to match; use {a,b} for alternatives (e.g. "*.{ts,tsx}"), and write a literal parenthesis as "\\(" or "\\)".',
    );
    expect(await refusal('[a]+b')).toBe(
      'pattern: "[a]+b" repeats a […] class with "+", which can take minutes to match. Use "*" after the class instead, or write a literal plus as "\\+".',
    );
    expect(await refusal('{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}')).toBe(
      'pattern: "{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}" expands to more than 64 patterns through its {…} alternatives and ranges. Use fewer or shorter {…} groups, or run several globs.',
    );
    expect(await refusal('{1..1000}')).toBe(
      'pattern: "{1..1000}" expands to more than 64 patterns through its {…} alternatives and ranges. Use fewer or shorter {…} groups, or run several globs.',
    );
    expect(await refusal('{*.md,*a*a*a*b}')).toBe(
      `pattern: "{*.md,*a*a*a*b}" has 4 "*" wildcards in the path segment "*a*a*a*b" (in its expansion "*a*a*a*b"); at most 3 are allowed in one segment, because each one more multiplies the matching time (such a pattern can take minutes). ${fix}`,
    );
    // search's glob filter walks the same way and is held to the same limits.
    expect(await failureOf(fx, () => searchTool.run({ pattern: 'x', glob: '*a*a*a*a*b' }, fx.context()))).toEqual({
      code: 'INVALID_ARGUMENT',
      message: `glob: "*a*a*a*a*b" has 5 "*" wildcards in the path segment "*a*a*a*a*b"; at most 3 are allowed in one segment, because each one more multiplies the matching time (such a pattern can take minutes). ${fix}`,
    });
  });

  it('still accepts ordinary patterns', async () => {
    mkdirSync(join(fx.ws, 'src/__tests__/deep'), { recursive: true });
    for (const name of ['src/view.tsx', 'src/app.test.ts', 'src/__tests__/deep/x.test.js', 'notes (1).txt'])
      writeFileSync(join(fx.ws, name), '');
    const files = async (pattern: string, path?: string) =>
      (await globTool.run(path === undefined ? { pattern } : { pattern, path }, fx.context())).files;
    expect(await files('src/**/*.{ts,tsx}')).toEqual(['src/app.test.ts', 'src/app.ts', 'src/deep/more.ts', 'src/view.tsx', 'src/x.ts']);
    expect(await files('*.test.*', 'src')).toEqual(['src/app.test.ts']);
    expect(await files('**/__tests__/**/*.test.*')).toEqual(['src/__tests__/deep/x.test.js']);
    expect(await files('src/[a-z]?p.ts')).toEqual(['src/app.ts']);
    expect(await files('src/?.ts')).toEqual(['src/x.ts']);
    expect(await files('notes \\(1\\).txt')).toEqual(['notes (1).txt']);
  });

  it('refuses a ".." or an absolute path that only appears once braces are expanded', async () => {
    expect(await failureOf(fx, () => globTool.run({ pattern: '{..,src}/*' }, fx.context()))).toEqual({
      code: 'PATH_NOT_ALLOWED',
      message:
        'pattern: "{..,src}/*" contains ".." (in its expansion "../*"), which could leave the root. Set path to the folder to search from instead.',
    });
    expect((await failureOf(fx, () => globTool.run({ pattern: '{/etc,src}/*' }, fx.context()))).code).toBe('PATH_NOT_ALLOWED');
  });

  it('reports an aborted call as ABORTED, not as an empty list', async () => {
    const controller = new AbortController();
    controller.abort();
    expect(await failureOf(fx, () => globTool.run({ pattern: '**/*.md' }, { ...fx.context(), signal: controller.signal }))).toEqual({
      code: 'ABORTED',
      message: 'Looking for files under "." stopped: the call was aborted (deadline reached or caller gave up).',
    });
  });

  it('caps the result count', async () => {
    mkdirSync(join(fx.ws, 'many'));
    for (let i = 0; i < 1001; i++) writeFileSync(join(fx.ws, 'many', `f${i}.txt`), '');
    const out = await globTool.run({ pattern: 'many/*.txt' }, fx.context());
    expect(out.files.length).toBe(1000);
    expect(out.truncated).toBe(true);
  });
});

describe('stat', () => {
  it('reports a file and a missing path', async () => {
    utimesSync(join(fx.ws, 'README.md'), new Date('2026-01-02T03:04:05Z'), new Date('2026-01-02T03:04:05Z'));
    expect(await statTool.run({ path: 'README.md' }, fx.context())).toEqual({
      path: 'README.md',
      exists: true,
      type: 'file',
      size: 24,
      mode: '644',
      modified: '2026-01-02T03:04:05.000Z',
      hardLinks: 1,
    });
    expect(await statTool.run({ path: 'src/none.ts' }, fx.context())).toEqual({ path: 'src/none.ts', exists: false });
    expect(await statTool.run({ path: 'src' }, fx.context())).toMatchObject({ type: 'directory' });
  });
});

describe('search', () => {
  it('has a precise schema', () => {
    expect(SearchInputSchema.safeParse({ pattern: 'x', max_results: 1000 }).success).toBe(true);
    expect(SearchInputSchema.safeParse({ pattern: 'x', max_results: 1001 }).success).toBe(false);
    expect(SearchInputSchema.safeParse({ pattern: '' }).success).toBe(false);
    expect(SearchInputSchema.safeParse({ pattern: 'x', regex: 'yes' }).success).toBe(false);
  });

  it('finds literal text, case-sensitive by default, skipping binaries, node_modules and links out', async () => {
    expect(await searchTool.run({ pattern: 'TODO' }, fx.context())).toEqual({
      matches: [
        { path: '.hidden/h.md', line: 1, column: 1, text: 'TODO hidden' },
        { path: 'README.md', line: 2, column: 1, text: 'TODO: write docs' },
        { path: 'src/x.ts', line: 1, column: 19, text: 'export const x = "TODO";' },
      ],
      truncated: false,
      filesSearched: 5,
      filesSkipped: 1,
    });
  });

  it('supports case-insensitive RE2 regexes, a glob filter and a single file', async () => {
    const out = await searchTool.run({ pattern: 'todo|answer', regex: true, case_sensitive: false, glob: 'src/**/*.ts' }, fx.context());
    expect(out.matches.map((m) => `${m.path}:${m.line}:${m.column}`)).toEqual(['src/app.ts:2:4', 'src/app.ts:3:14', 'src/x.ts:1:19']);
    const single = await searchTool.run({ pattern: 'answer', path: 'src/app.ts' }, fx.context());
    expect(single).toEqual({
      matches: [{ path: 'src/app.ts', line: 3, column: 14, text: 'export const answer = 42;' }],
      truncated: false,
      filesSearched: 1,
      filesSkipped: 0,
    });
  });

  it('stops at max_results', async () => {
    const out = await searchTool.run({ pattern: 'o', max_results: 2, path: 'src' }, fx.context());
    expect(out.matches.length).toBe(2);
    expect(out.truncated).toBe(true);
  });

  it('refuses a regex whose RE2 program is too large, naming its size and the limit', async () => {
    writeFileSync(join(fx.ws, 'one-line.txt'), 'a'.repeat(10_000));
    expect(await failureOf(fx, () => searchTool.run({ pattern: '\\w{999}\\W', regex: true, case_sensitive: false }, fx.context()))).toEqual(
      {
        code: 'INVALID_ARGUMENT',
        message:
          'pattern: "\\w{999}\\W" compiles to an RE2 program of 1002 instructions, over the limit of 200; matching time grows with program size times line length, so it could stall the host. Use smaller repeat counts (e.g. "\\w{20,}" rather than "\\w{999}") or fewer alternatives, or split it into several searches.',
      },
    );
    // The runtime asks canonicalize first, so policy and audit never see the call either.
    expect((await failureOf(fx, () => searchTool.canonicalize!({ pattern: 'x{300}', regex: true }, fx.context()))).code).toBe(
      'INVALID_ARGUMENT',
    );
  });

  it('bounds case-insensitive text, but not case-sensitive text, which needs no regex', async () => {
    const long = `${'a'.repeat(299)}!`;
    writeFileSync(join(fx.ws, 'long.txt'), `x${long}\n`);
    expect(await failureOf(fx, () => searchTool.run({ pattern: long, case_sensitive: false, path: 'long.txt' }, fx.context()))).toEqual({
      code: 'INVALID_ARGUMENT',
      message: `pattern: "${'a'.repeat(120)}…" (300 characters) compiles to an RE2 program of 302 instructions for a case-insensitive search, over the limit of 200. Search for a shorter piece of it, or pass case_sensitive: true (case-sensitive text has no such limit).`,
    });
    expect((await searchTool.run({ pattern: long, path: 'long.txt' }, fx.context())).matches).toEqual([
      { path: 'long.txt', line: 1, column: 2, text: `x${long.slice(0, 299)}…` },
    ]);
  });

  it('keeps typical regexes working', async () => {
    writeFileSync(
      join(fx.ws, 'typical.ts'),
      [
        'export async function loadConfig(path) {',
        '  // commit 0123456789abcdef0123456789abcdef01234567 from 10.0.0.1',
        '  console.warn(`uuid: 123e4567-e89b-12d3-a456-426614174000`);',
        '}',
      ].join('\n'),
    );
    const where = async (pattern: string) =>
      (await searchTool.run({ pattern, regex: true, path: 'typical.ts' }, fx.context())).matches.map((m) => `${m.line}:${m.column}`);
    expect(await where('^\\s*(export\\s+)?(async\\s+)?function\\s+([A-Za-z_$][\\w$]*)')).toEqual(['1:1']);
    expect(await where('[0-9a-f]{40}')).toEqual(['2:13']);
    expect(await where('\\b(?:\\d{1,3}\\.){3}\\d{1,3}\\b')).toEqual(['2:59']);
    expect(await where('uuid: [0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}')).toEqual(['3:17']);
    expect(await where('console\\.(log|warn|error)\\(|TODO|FIXME|XXX|HACK|loadConfig|readConfig|writeConfig|parseArgs|main')).toEqual([
      '1:23',
      '3:3',
    ]);
  });

  it('reports an aborted call as ABORTED, not as a short list of matches', async () => {
    const controller = new AbortController();
    controller.abort();
    expect(await failureOf(fx, () => searchTool.run({ pattern: 'TODO' }, { ...fx.context(), signal: controller.signal }))).toEqual({
      code: 'ABORTED',
      message: 'Looking for files under "." stopped: the call was aborted (deadline reached or caller gave up).',
    });
  });

  it('explains an invalid regex', async () => {
    expect(await failureOf(fx, () => searchTool.run({ pattern: '(a)\\1', regex: true }, fx.context()))).toEqual({
      code: 'INVALID_ARGUMENT',
      message:
        'pattern: not a valid RE2 regular expression (error parsing regexp: invalid escape sequence: `\\1`). RE2 has no backreferences or lookaround; escape special characters, or pass regex: false to search for the literal text.',
    });
  });
});
