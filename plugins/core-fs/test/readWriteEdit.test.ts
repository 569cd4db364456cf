import { chmodSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  EditInputSchema,
  FsSettingsSchema,
  ReadInputSchema,
  WriteInputSchema,
  editTool,
  plugin,
  readTool,
  writeTool,
} from '../src/index.ts';
import { failureOf, makeFsFixture } from './fsFixture.ts';
import type { FsFixture } from './fsFixture.ts';

let fx: FsFixture;
const file = (name: string) => join(fx.ws, name);

beforeEach(() => {
  fx = makeFsFixture();
  mkdirSync(fx.ws, { recursive: true });
});
afterEach(() => fx.remove());

describe('settings', () => {
  it('accepts {} with safe defaults and refuses wrong types and unknown keys', () => {
    expect(FsSettingsSchema.parse({})).toEqual({ root: '.', max_read_bytes: 1048576, max_write_bytes: 1048576, allow_write: false });
    expect(FsSettingsSchema.safeParse({ allow_write: 'yes' }).success).toBe(false);
    expect(FsSettingsSchema.safeParse({ max_read_bytes: 0 }).success).toBe(false);
    expect(FsSettingsSchema.safeParse({ max_read_bytes: 1.5 }).success).toBe(false);
    expect(FsSettingsSchema.safeParse({ rot: '.' }).success).toBe(false);
    expect(plugin.settings?.key).toBe('fs');
    expect(plugin.tools.map((t) => t.name)).toEqual(['read', 'write', 'edit', 'list', 'glob', 'stat', 'search']);
  });
});

describe('read', () => {
  it('has a precise schema', () => {
    expect(ReadInputSchema.safeParse({ path: 'a.txt', offset: 1, limit: 10 }).success).toBe(true);
    expect(ReadInputSchema.safeParse({ path: '' }).success).toBe(false);
    expect(ReadInputSchema.safeParse({ path: 'a.txt', offset: 0 }).success).toBe(false);
    expect(ReadInputSchema.safeParse({ path: 'a.txt', limit: 5001 }).success).toBe(false);
    expect(ReadInputSchema.safeParse({ path: 'a.txt', encoding: 'latin1' }).success).toBe(false);
  });

  it('returns a line range with the total count', async () => {
    writeFileSync(file('lines.txt'), 'one\ntwo\nthree\nfour\nfive\n');
    expect(await readTool.run(ReadInputSchema.parse({ path: 'lines.txt', offset: 2, limit: 2 }), fx.context())).toEqual({
      path: 'lines.txt',
      encoding: 'utf-8',
      lineEnding: 'lf',
      totalLines: 5,
      startLine: 2,
      endLine: 3,
      content: 'two\nthree',
      hasMore: true,
      lineCut: false,
    });
    expect(await readTool.run({ path: 'lines.txt', offset: 4 }, fx.context())).toMatchObject({
      content: 'four\nfive',
      endLine: 5,
      hasMore: false,
    });
  });

  it('stops at 256 KiB of text per call and cuts a single giant line', async () => {
    const line = 'x'.repeat(1023);
    writeFileSync(file('wide.txt'), `${line}\n`.repeat(300));
    const first = await readTool.run({ path: 'wide.txt' }, fx.context());
    expect({ endLine: first.endLine, hasMore: first.hasMore, lineCut: first.lineCut, bytes: first.content.length }).toEqual({
      endLine: 256,
      hasMore: true,
      lineCut: false,
      bytes: 256 * 1024 - 1,
    });
    expect((await readTool.run({ path: 'wide.txt', offset: 257 }, fx.context())).endLine).toBe(300);
    writeFileSync(file('minified.js'), 'é'.repeat(200_000));
    const cut = await readTool.run({ path: 'minified.js' }, fx.context());
    expect({ endLine: cut.endLine, hasMore: cut.hasMore, lineCut: cut.lineCut, chars: cut.content.length }).toEqual({
      endLine: 1,
      hasMore: false,
      lineCut: true,
      chars: 131072,
    });
  });

  it('reads an empty file and refuses an offset past the end', async () => {
    writeFileSync(file('empty.txt'), '');
    expect(await readTool.run({ path: 'empty.txt' }, fx.context())).toMatchObject({
      totalLines: 0,
      startLine: 1,
      endLine: 0,
      content: '',
      lineEnding: 'none',
    });
    writeFileSync(file('two.txt'), 'a\r\nb\r\n');
    expect(await failureOf(fx, () => readTool.run({ path: 'two.txt', offset: 3 }, fx.context()))).toEqual({
      code: 'INVALID_ARGUMENT',
      message: 'offset: 3 is past the end of "two.txt", which has 2 lines. Use an offset from 1 to 2.',
    });
    expect(await readTool.run({ path: 'two.txt' }, fx.context())).toMatchObject({ content: 'a\nb', lineEnding: 'crlf' });
  });

  it('detects and decodes UTF-8 and UTF-16 BOMs', async () => {
    writeFileSync(file('bom8.txt'), Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('héllo\nwörld', 'utf8')]));
    writeFileSync(file('le.txt'), Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('grüße\n', 'utf16le')]));
    writeFileSync(file('be.txt'), Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from('日本語\n', 'utf16le').swap16()]));
    expect(await readTool.run({ path: 'bom8.txt' }, fx.context())).toMatchObject({
      encoding: 'utf-8-bom',
      content: 'héllo\nwörld',
      totalLines: 2,
    });
    expect(await readTool.run({ path: 'le.txt' }, fx.context())).toMatchObject({ encoding: 'utf-16le', content: 'grüße', totalLines: 1 });
    expect(await readTool.run({ path: 'be.txt' }, fx.context())).toMatchObject({ encoding: 'utf-16be', content: '日本語', totalLines: 1 });
  });

  it('refuses binary files: NUL bytes or invalid UTF-8', async () => {
    writeFileSync(file('image.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00]));
    writeFileSync(file('latin1.txt'), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
    expect(await failureOf(fx, () => readTool.run({ path: 'image.png' }, fx.context()))).toEqual({
      code: 'INVALID_ARGUMENT',
      message:
        'path: "image.png" looks binary (it contains NUL bytes), so it is not returned as text. Use core-fs.stat for its size and type.',
    });
    expect((await failureOf(fx, () => readTool.run({ path: 'latin1.txt' }, fx.context()))).message).toBe(
      'path: "latin1.txt" looks binary (it is not valid UTF-8 text), so it is not returned as text. Use core-fs.stat for its size and type.',
    );
  });

  it('refuses files over max_read_bytes, folders and missing files', async () => {
    writeFileSync(file('big.txt'), 'x'.repeat(101));
    mkdirSync(file('folder'));
    expect(await failureOf(fx, () => readTool.run({ path: 'big.txt' }, fx.context({ max_read_bytes: 100 })))).toEqual({
      code: 'TOO_LARGE',
      message:
        'path: "big.txt" is 101 bytes, over the 100-byte limit ([runtime.tools.fs] max_read_bytes). Use core-fs.search to find the lines you need, or ask the operator to raise the limit.',
    });
    expect(await failureOf(fx, () => readTool.run({ path: 'folder' }, fx.context()))).toEqual({
      code: 'INVALID_ARGUMENT',
      message: 'path: "folder" is a folder, not a file. Use core-fs.list to see what it holds.',
    });
    expect(await failureOf(fx, () => readTool.run({ path: 'nope.txt' }, fx.context()))).toEqual({
      code: 'NOT_FOUND',
      message: 'path: "nope.txt" does not exist. Use core-fs.list or core-fs.glob to find the right path.',
    });
  });
});

describe('write', () => {
  it('has a precise schema', () => {
    expect(WriteInputSchema.safeParse({ path: 'a', content: '' }).success).toBe(true);
    expect(WriteInputSchema.safeParse({ path: 'a' }).success).toBe(false);
    expect(WriteInputSchema.safeParse({ path: 'a', content: 1 }).success).toBe(false);
    expect(WriteInputSchema.safeParse({ path: 'a', content: '', mode: 777 }).success).toBe(false);
  });

  it('is refused while allow_write is false (the default)', async () => {
    expect(await failureOf(fx, () => writeTool.run({ path: 'a.txt', content: 'x' }, fx.context()))).toEqual({
      code: 'NOT_ALLOWED',
      message:
        'core-fs.write: writing is turned off ([runtime.tools.fs] allow_write = false, the default). You cannot create or change files; tell the user, who can set allow_write = true under [runtime.tools.fs] in runtime.toml.',
    });
    expect(existsSync(file('a.txt'))).toBe(false);
  });

  it('creates and replaces files atomically, keeping the mode and leaving no temp file', async () => {
    const ctx = fx.context({ allow_write: true });
    expect(await writeTool.run({ path: 'note.md', content: 'first\n' }, ctx)).toEqual({ path: 'note.md', bytes: 6, created: true });
    chmodSync(file('note.md'), 0o600);
    expect(await writeTool.run({ path: 'note.md', content: 'sécond\n' }, ctx)).toEqual({ path: 'note.md', bytes: 8, created: false });
    expect(readFileSync(file('note.md'), 'utf8')).toBe('sécond\n');
    expect(statSync(file('note.md')).mode & 0o777).toBe(0o600);
    expect(readdirSync(fx.ws)).toEqual(['note.md']);
  });

  it('creates parents only on request', async () => {
    const ctx = fx.context({ allow_write: true });
    expect(await failureOf(fx, () => writeTool.run({ path: 'a/b/c.txt', content: 'x' }, ctx))).toEqual({
      code: 'NOT_FOUND',
      message: 'path: the folder "a/b" does not exist. Pass create_parents: true to create it, or check the path with core-fs.list.',
    });
    expect(await writeTool.run({ path: 'a/b/c.txt', content: 'x', create_parents: true }, ctx)).toEqual({
      path: 'a/b/c.txt',
      bytes: 1,
      created: true,
    });
    expect(readFileSync(file('a/b/c.txt'), 'utf8')).toBe('x');
  });

  it('refuses content over max_write_bytes, folders and the root itself', async () => {
    mkdirSync(file('dir'));
    const ctx = fx.context({ allow_write: true, max_write_bytes: 4 });
    expect(await failureOf(fx, () => writeTool.run({ path: 'a.txt', content: 'héllo' }, ctx))).toEqual({
      code: 'TOO_LARGE',
      message:
        'content: the new content is 6 bytes, over the 4-byte limit ([runtime.tools.fs] max_write_bytes). Write a smaller file, or split it into several.',
    });
    expect(await failureOf(fx, () => writeTool.run({ path: 'dir', content: 'x' }, ctx))).toEqual({
      code: 'INVALID_ARGUMENT',
      message: 'path: "dir" is a folder; only regular files can be written.',
    });
    expect((await failureOf(fx, () => writeTool.run({ path: '.', content: 'x' }, ctx))).code).toBe('INVALID_ARGUMENT');
  });

  it('canonicalizes to the real target with a summary that carries no content', async () => {
    const out = await writeTool.canonicalize!({ path: './x/../new.txt', content: 'secret' }, fx.context());
    expect(out).toEqual({
      input: { path: file('new.txt'), content: 'secret' },
      summary: { path: 'new.txt', real: file('new.txt'), exists: false, bytes: 6 },
    });
  });
});

describe('edit', () => {
  const ctx = () => fx.context({ allow_write: true });

  it('has a precise schema', () => {
    expect(EditInputSchema.safeParse({ path: 'a', old: 'x', new: '' }).success).toBe(true);
    expect(EditInputSchema.safeParse({ path: 'a', old: '', new: 'y' }).success).toBe(false);
    expect(EditInputSchema.safeParse({ path: 'a', old: 'x' }).success).toBe(false);
  });

  it('replaces one exact occurrence, literally (no $-patterns)', async () => {
    writeFileSync(file('a.ts'), 'const a = 1;\nconst b = 2;\n');
    expect(await editTool.run({ path: 'a.ts', old: 'const b = 2;', new: "const b = '$&$1';" }, ctx())).toEqual({
      path: 'a.ts',
      replacements: 1,
      bytes: 31,
    });
    expect(readFileSync(file('a.ts'), 'utf8')).toBe("const a = 1;\nconst b = '$&$1';\n");
  });

  it('says when old is missing or not unique, and replaces all on request', async () => {
    writeFileSync(file('b.txt'), 'x y x y x\n');
    expect(await failureOf(fx, () => editTool.run({ path: 'b.txt', old: 'z', new: 'w' }, ctx()))).toEqual({
      code: 'INVALID_ARGUMENT',
      message:
        'old: the text was not found in "b.txt" (0 matches). It must match exactly, including whitespace and line breaks; read the file again with core-fs.read and copy the text from it.',
    });
    expect(await failureOf(fx, () => editTool.run({ path: 'b.txt', old: 'x', new: 'w' }, ctx()))).toEqual({
      code: 'INVALID_ARGUMENT',
      message:
        'old: the text occurs 3 times in "b.txt". Include more surrounding lines so it matches exactly once, or pass replace_all: true to replace all 3.',
    });
    expect(readFileSync(file('b.txt'), 'utf8')).toBe('x y x y x\n');
    expect(await editTool.run({ path: 'b.txt', old: 'x', new: 'w', replace_all: true }, ctx())).toEqual({
      path: 'b.txt',
      replacements: 3,
      bytes: 10,
    });
    expect(readFileSync(file('b.txt'), 'utf8')).toBe('w y w y w\n');
  });

  it('matches \\n in old against a CRLF file and keeps its line breaks', async () => {
    writeFileSync(file('win.txt'), 'one\r\ntwo\r\nthree\r\n');
    await editTool.run({ path: 'win.txt', old: 'one\ntwo', new: 'uno\ndos' }, ctx());
    expect(readFileSync(file('win.txt'), 'utf8')).toBe('uno\r\ndos\r\nthree\r\n');
  });

  it('keeps a UTF-16 file UTF-16 with its BOM', async () => {
    writeFileSync(file('u16.txt'), Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from('hello world', 'utf16le').swap16()]));
    await editTool.run({ path: 'u16.txt', old: 'world', new: 'welt' }, ctx());
    expect(readFileSync(file('u16.txt'))).toEqual(
      Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from('hello welt', 'utf16le').swap16()]),
    );
  });

  it('refuses a replace_all that would outgrow max_write_bytes before building the text', async () => {
    // 300,000 one-byte matches, each made 2,000 bytes: 600 MB, more than a JavaScript string holds.
    writeFileSync(file('many.txt'), 'a'.repeat(300_000));
    expect(
      await failureOf(fx, () => editTool.run({ path: 'many.txt', old: 'a', new: 'b'.repeat(2000), replace_all: true }, ctx())),
    ).toEqual({
      code: 'TOO_LARGE',
      message:
        'new: replacing 300000 occurrences of old would make "many.txt" 600000000 bytes, over the 1048576-byte limit ([runtime.tools.fs] max_write_bytes). Replace fewer occurrences (make old unique and drop replace_all), or use a shorter new text.',
    });
    expect(readFileSync(file('many.txt'), 'utf8')).toBe('a'.repeat(300_000));
  });

  it("counts the edited size in the file's own encoding, to the byte", async () => {
    writeFileSync(file('u8.txt'), 'x y x');
    // Two "éé" (4 bytes each) for two "x": 5 + 2 × 3 = 11 bytes.
    expect(
      await failureOf(fx, () =>
        editTool.run({ path: 'u8.txt', old: 'x', new: 'éé', replace_all: true }, fx.context({ allow_write: true, max_write_bytes: 10 })),
      ),
    ).toEqual({
      code: 'TOO_LARGE',
      message:
        'new: replacing 2 occurrences of old would make "u8.txt" 11 bytes, over the 10-byte limit ([runtime.tools.fs] max_write_bytes). Replace fewer occurrences (make old unique and drop replace_all), or use a shorter new text.',
    });
    expect(
      await editTool.run(
        { path: 'u8.txt', old: 'x', new: 'éé', replace_all: true },
        fx.context({ allow_write: true, max_write_bytes: 11 }),
      ),
    ).toEqual({
      path: 'u8.txt',
      replacements: 2,
      bytes: 11,
    });
    // UTF-16 with a BOM: 2 + 2 × 5 bytes, and each "ab" for "x" adds 2 bytes.
    writeFileSync(file('u16.txt'), Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from('x y x', 'utf16le').swap16()]));
    expect(
      await failureOf(fx, () =>
        editTool.run({ path: 'u16.txt', old: 'y', new: 'abc' }, fx.context({ allow_write: true, max_write_bytes: 15 })),
      ),
    ).toEqual({
      code: 'TOO_LARGE',
      message:
        'new: replacing 1 occurrence of old would make "u16.txt" 16 bytes, over the 15-byte limit ([runtime.tools.fs] max_write_bytes). Use a shorter new text, or write a smaller file.',
    });
    expect(
      await editTool.run(
        { path: 'u16.txt', old: 'x', new: 'ab', replace_all: true },
        fx.context({ allow_write: true, max_write_bytes: 16 }),
      ),
    ).toEqual({
      path: 'u16.txt',
      replacements: 2,
      bytes: 16,
    });
  });

  it('refuses when writes are off, for missing files and for no-op edits', async () => {
    writeFileSync(file('c.txt'), 'abc');
    expect((await failureOf(fx, () => editTool.run({ path: 'c.txt', old: 'a', new: 'b' }, fx.context()))).code).toBe('NOT_ALLOWED');
    expect(await failureOf(fx, () => editTool.run({ path: 'gone.txt', old: 'a', new: 'b' }, ctx()))).toEqual({
      code: 'NOT_FOUND',
      message: 'path: "gone.txt" does not exist. To create a file use core-fs.write.',
    });
    expect(await failureOf(fx, () => editTool.run({ path: 'c.txt', old: 'a', new: 'a' }, ctx()))).toEqual({
      code: 'INVALID_ARGUMENT',
      message: 'new: is the same as old, so the edit would change nothing.',
    });
  });
});
