import { existsSync, linkSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { editTool, listTool, readTool, searchTool, statTool, writeTool } from '../src/index.ts';
import { failureOf, makeFsFixture } from './fsFixture.ts';
import type { FsFixture } from './fsFixture.ts';

let fx: FsFixture;

beforeEach(() => {
  fx = makeFsFixture();
  mkdirSync(join(fx.ws, 'sub'), { recursive: true });
  mkdirSync(fx.outside);
  writeFileSync(join(fx.outside, 'secret.txt'), 'TOP SECRET\n');
  writeFileSync(join(fx.ws, 'sub', 'file.txt'), 'inside\n');
});
afterEach(() => fx.remove());

describe('escape attempts are refused with PATH_NOT_ALLOWED', () => {
  it('refuses ../ climbing out of the root', async () => {
    expect(await failureOf(fx, () => readTool.run({ path: '../outside/secret.txt' }, fx.context()))).toEqual({
      code: 'PATH_NOT_ALLOWED',
      message:
        'path: "../outside/secret.txt" leaves the root "<tmp>/ws" (it resolves to "<tmp>/outside/secret.txt"). Use a path inside the root; ".." may not climb above it.',
    });
    expect((await failureOf(fx, () => readTool.run({ path: 'sub/../../outside/secret.txt' }, fx.context()))).code).toBe('PATH_NOT_ALLOWED');
  });

  it('refuses absolute paths outside the root and accepts absolute paths inside it', async () => {
    expect(await failureOf(fx, () => readTool.run({ path: '/etc/passwd' }, fx.context()))).toEqual({
      code: 'PATH_NOT_ALLOWED',
      message:
        'path: "/etc/passwd" is an absolute path outside the root "<tmp>/ws". Use a path relative to the root instead, e.g. "src/index.ts".',
    });
    expect((await failureOf(fx, () => readTool.run({ path: join(fx.outside, 'secret.txt') }, fx.context()))).code).toBe('PATH_NOT_ALLOWED');
    const out = await readTool.run({ path: join(fx.ws, 'sub', 'file.txt') }, fx.context());
    expect(out.content).toBe('inside');
    expect(out.path).toBe('sub/file.txt');
  });

  it('refuses a symlinked file that points out of the root', async () => {
    symlinkSync(join(fx.outside, 'secret.txt'), join(fx.ws, 'leak.txt'));
    expect(await failureOf(fx, () => readTool.run({ path: 'leak.txt' }, fx.context()))).toEqual({
      code: 'PATH_NOT_ALLOWED',
      message:
        'path: "leak.txt" leads through the symlink "leak.txt" to "<tmp>/outside/secret.txt", outside the root "<tmp>/ws". Symlinks are only followed while they stay inside the root; use a path that does not go through it.',
    });
    expect((await failureOf(fx, () => statTool.run({ path: 'leak.txt' }, fx.context()))).code).toBe('PATH_NOT_ALLOWED');
    expect((await failureOf(fx, () => writeTool.run({ path: 'leak.txt', content: 'pwned' }, fx.context({ allow_write: true })))).code).toBe(
      'PATH_NOT_ALLOWED',
    );
    expect(readFileSync(join(fx.outside, 'secret.txt'), 'utf8')).toBe('TOP SECRET\n');
  });

  it('refuses a relative symlink chain that ends outside', async () => {
    symlinkSync('../../outside', join(fx.ws, 'sub', 'hop'));
    symlinkSync('sub/hop/secret.txt', join(fx.ws, 'chain'));
    expect(await failureOf(fx, () => readTool.run({ path: 'chain' }, fx.context()))).toEqual({
      code: 'PATH_NOT_ALLOWED',
      message:
        'path: "chain" leads through the symlink "sub/hop" to "<tmp>/outside/secret.txt", outside the root "<tmp>/ws". Symlinks are only followed while they stay inside the root; use a path that does not go through it.',
    });
  });

  it('refuses a symlinked folder that points out, for reads, lists, searches and writes through it', async () => {
    symlinkSync(fx.outside, join(fx.ws, 'out'));
    expect((await failureOf(fx, () => readTool.run({ path: 'out/secret.txt' }, fx.context()))).code).toBe('PATH_NOT_ALLOWED');
    expect((await failureOf(fx, () => listTool.run({ path: 'out' }, fx.context()))).code).toBe('PATH_NOT_ALLOWED');
    expect((await failureOf(fx, () => searchTool.run({ pattern: 'SECRET', path: 'out' }, fx.context()))).code).toBe('PATH_NOT_ALLOWED');
    expect(await failureOf(fx, () => writeTool.run({ path: 'out/new.txt', content: 'x' }, fx.context({ allow_write: true })))).toEqual({
      code: 'PATH_NOT_ALLOWED',
      message:
        'path: "out/new.txt" leads through the symlink "out" to "<tmp>/outside/new.txt", outside the root "<tmp>/ws". Symlinks are only followed while they stay inside the root; use a path that does not go through it.',
    });
    expect(
      (
        await failureOf(fx, () =>
          writeTool.run({ path: 'out/deep/new.txt', content: 'x', create_parents: true }, fx.context({ allow_write: true })),
        )
      ).code,
    ).toBe('PATH_NOT_ALLOWED');
    expect(readdirSync(fx.outside)).toEqual(['secret.txt']);
  });

  it('never creates a file through a dangling symlink that points out', async () => {
    symlinkSync(join(fx.outside, 'planted.txt'), join(fx.ws, 'dangling'));
    expect((await failureOf(fx, () => writeTool.run({ path: 'dangling', content: 'x' }, fx.context({ allow_write: true })))).code).toBe(
      'PATH_NOT_ALLOWED',
    );
    expect(existsSync(join(fx.outside, 'planted.txt'))).toBe(false);
  });

  it('follows symlinks that stay inside and reports the real target', async () => {
    symlinkSync('sub/file.txt', join(fx.ws, 'alias'));
    symlinkSync('sub', join(fx.ws, 'subdir-alias'));
    expect((await readTool.run({ path: 'alias' }, fx.context())).path).toBe('sub/file.txt');
    expect((await readTool.run({ path: 'subdir-alias/file.txt' }, fx.context())).path).toBe('sub/file.txt');
    const canonical = await readTool.canonicalize!({ path: 'alias' }, fx.context());
    expect({ input: canonical.input, summary: canonical.summary }).toEqual({
      input: { path: join(fx.ws, 'sub', 'file.txt') },
      summary: { path: 'sub/file.txt', real: join(fx.ws, 'sub', 'file.txt') },
    });
  });

  it('resolves again in run, so a folder swapped for a symlink after canonicalize cannot redirect a write', async () => {
    const ctx = fx.context({ allow_write: true });
    const canonical = await writeTool.canonicalize!({ path: 'sub/new.txt', content: 'x' }, ctx);
    expect(canonical.input.path).toBe(join(fx.ws, 'sub', 'new.txt'));
    rmSync(join(fx.ws, 'sub'), { recursive: true });
    symlinkSync(fx.outside, join(fx.ws, 'sub'));
    expect((await failureOf(fx, () => writeTool.run(canonical.input, ctx))).code).toBe('PATH_NOT_ALLOWED');
    expect(readdirSync(fx.outside)).toEqual(['secret.txt']);
  });

  it('refuses a symlink loop', async () => {
    symlinkSync('loop-b', join(fx.ws, 'loop-a'));
    symlinkSync('loop-a', join(fx.ws, 'loop-b'));
    expect(await failureOf(fx, () => readTool.run({ path: 'loop-a' }, fx.context()))).toEqual({
      code: 'PATH_NOT_ALLOWED',
      message: 'path: "loop-a" goes through more than 40 symlinks (a loop?). Use a path without the symlink loop.',
    });
  });

  it('refuses NUL bytes, over-long paths and over-long names', async () => {
    expect(await failureOf(fx, () => readTool.run({ path: 'sub/file.txt\0.png' }, fx.context()))).toEqual({
      code: 'PATH_NOT_ALLOWED',
      message: 'path: contains a NUL byte, which no file name can hold. Pass the path as plain text, e.g. "src/index.ts".',
    });
    const longPath = Array.from({ length: 20 }, () => 'd'.repeat(250)).join('/');
    expect(await failureOf(fx, () => statTool.run({ path: longPath }, fx.context()))).toEqual({
      code: 'PATH_NOT_ALLOWED',
      message: 'path: is 5019 bytes long; paths are limited to 4096 bytes. Use a shorter path relative to the root.',
    });
    expect(
      await failureOf(fx, () => writeTool.run({ path: `sub/${'n'.repeat(256)}`, content: '' }, fx.context({ allow_write: true }))),
    ).toEqual({
      code: 'PATH_NOT_ALLOWED',
      message: 'path: the name "nnnnnnnnnnnnnnnnnnnnnnnn…" is 256 bytes long; a single file or folder name is limited to 255 bytes.',
    });
  });

  it('treats a file used as a folder as not found', async () => {
    expect(await failureOf(fx, () => readTool.run({ path: 'sub/file.txt/x' }, fx.context()))).toEqual({
      code: 'NOT_FOUND',
      message: 'path: "sub/file.txt/x" treats "<tmp>/ws/sub/file.txt" as a folder, but it is a file. Check the path with core-fs.list.',
    });
  });
});

describe('hard links', () => {
  beforeEach(() => {
    linkSync(join(fx.outside, 'secret.txt'), join(fx.ws, 'hardlink.txt'));
  });

  it('refuses to write or edit a file with more than one link, leaving the other name untouched', async () => {
    const message =
      'path: "hardlink.txt" has 2 hard links. Another name for the same file may lie outside the root, so core-fs will not change it (a write would also split the names apart). Write to a new file instead, or ask the user to replace the hard link with a copy.';
    expect(
      await failureOf(fx, () => writeTool.run({ path: 'hardlink.txt', content: 'changed' }, fx.context({ allow_write: true }))),
    ).toEqual({
      code: 'NOT_ALLOWED',
      message,
    });
    expect(
      await failureOf(fx, () => editTool.run({ path: 'hardlink.txt', old: 'TOP', new: 'NOT' }, fx.context({ allow_write: true }))),
    ).toEqual({ code: 'NOT_ALLOWED', message });
    expect(readFileSync(join(fx.outside, 'secret.txt'), 'utf8')).toBe('TOP SECRET\n');
  });

  it('allows reads (documented decision) and shows the link count in stat', async () => {
    expect((await readTool.run({ path: 'hardlink.txt' }, fx.context())).content).toBe('TOP SECRET');
    expect(await statTool.run({ path: 'hardlink.txt' }, fx.context())).toMatchObject({ exists: true, type: 'file', hardLinks: 2 });
  });
});

describe('root setting', () => {
  it('confines to a configured sub-root, relative to the workspace', async () => {
    expect((await readTool.run({ path: 'file.txt' }, fx.context({ root: 'sub' }))).content).toBe('inside');
    expect((await readTool.run({ path: '../sub/file.txt' }, fx.context({ root: 'sub' }))).path).toBe('file.txt');
    expect(await failureOf(fx, () => readTool.run({ path: '../other.txt' }, fx.context({ root: 'sub' })))).toEqual({
      code: 'PATH_NOT_ALLOWED',
      message:
        'path: "../other.txt" leaves the root "<tmp>/ws/sub" (it resolves to "<tmp>/ws/other.txt"). Use a path inside the root; ".." may not climb above it.',
    });
  });

  it('says when the configured root does not exist', async () => {
    expect(await failureOf(fx, () => readTool.run({ path: 'x' }, fx.context({ root: 'missing' })))).toEqual({
      code: 'NOT_FOUND',
      message:
        '[runtime.tools.fs] root: "<tmp>/ws/missing" does not exist. The operator must create it or set root to an existing folder in runtime.toml.',
    });
  });

  it('accepts a root that is itself reached through a symlink', async () => {
    symlinkSync(join(fx.ws, 'sub'), join(fx.base, 'sub-link'));
    const ctx = fx.context({ root: join(fx.base, 'sub-link') });
    expect((await readTool.run({ path: join(fx.base, 'sub-link', 'file.txt') }, ctx)).path).toBe('file.txt');
  });
});
