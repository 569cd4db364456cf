import { execFileSync } from 'node:child_process';
import { linkSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isToolError } from '@trellis/sdk';
import { readTableFile, resolveRoot } from '../src/readTableFile.ts';
import { makeTree } from './makeContext.ts';

let root: ReturnType<typeof makeTree>;
let outside: ReturnType<typeof makeTree>;

beforeEach(() => {
  root = makeTree({ 'data/t.csv': 'a\n1\n', 'inside.csv': 'b\n2\n' });
  outside = makeTree({ 'secret.csv': 'password\nhunter2\n' });
});
afterEach(() => {
  root.cleanup();
  outside.cleanup();
});

async function refusal(path: string, maxBytes = 1_000_000): Promise<{ code: string; message: string }> {
  try {
    await readTableFile({ rootReal: root.dir, path, maxBytes });
  } catch (error) {
    if (isToolError(error)) return { code: error.code, message: error.message.replaceAll(root.dir, '<root>') };
    throw error;
  }
  throw new Error(`expected ${path} to be refused`);
}

describe('readTableFile', () => {
  it('reads relative and absolute paths inside the root, shown relative to it', async () => {
    expect(await readTableFile({ rootReal: root.dir, path: 'data/t.csv', maxBytes: 100 })).toEqual({
      realPath: join(root.dir, 'data/t.csv'),
      displayPath: 'data/t.csv',
      bytes: Buffer.from('a\n1\n'),
    });
    expect((await readTableFile({ rootReal: root.dir, path: join(root.dir, 'data', '..', 'inside.csv'), maxBytes: 100 })).displayPath).toBe(
      'inside.csv',
    );
    expect((await readTableFile({ rootReal: root.dir, path: './data/./t.csv', maxBytes: 100 })).displayPath).toBe('data/t.csv');
  });

  it('refuses ../ and absolute paths that leave the root', async () => {
    const message = (path: string) =>
      `path: "${path}" is outside the table root <root>; give a path inside it, relative to the root (e.g. "data/sales.csv").`;
    expect(await refusal('../x.csv')).toEqual({ code: 'PATH_NOT_ALLOWED', message: message('../x.csv') });
    expect(await refusal('data/../../x.csv')).toEqual({ code: 'PATH_NOT_ALLOWED', message: message('data/../../x.csv') });
    const abs = join(outside.dir, 'secret.csv');
    expect(await refusal(abs)).toEqual({ code: 'PATH_NOT_ALLOWED', message: message(abs) });
    expect(await refusal('/etc/passwd')).toEqual({ code: 'PATH_NOT_ALLOWED', message: message('/etc/passwd') });
  });

  it('refuses a symlink out of the root, as the file or as a folder on the way', async () => {
    symlinkSync(join(outside.dir, 'secret.csv'), join(root.dir, 'link.csv'));
    symlinkSync(outside.dir, join(root.dir, 'data', 'out'));
    expect(await refusal('link.csv')).toEqual({
      code: 'PATH_NOT_ALLOWED',
      message:
        'path: "link.csv" goes through the symlink "link.csv", which points outside the table root; only files inside the root can be read.',
    });
    expect(await refusal('data/out/secret.csv')).toEqual({
      code: 'PATH_NOT_ALLOWED',
      message:
        'path: "data/out/secret.csv" goes through the symlink "data/out", which points outside the table root; only files inside the root can be read.',
    });
  });

  it('follows a symlink that stays inside the root', async () => {
    symlinkSync(join(root.dir, 'data'), join(root.dir, 'alias'));
    expect((await readTableFile({ rootReal: root.dir, path: 'alias/t.csv', maxBytes: 100 })).displayPath).toBe('data/t.csv');
  });

  it('refuses a hard link (it may expose a file from outside)', async () => {
    linkSync(join(outside.dir, 'secret.csv'), join(root.dir, 'hard.csv'));
    expect(await refusal('hard.csv')).toEqual({
      code: 'PATH_NOT_ALLOWED',
      message:
        'path: "hard.csv" is a hard link (2 names for one file), which may expose a file from outside the table root; copy the file instead of linking it.',
    });
  });

  it('refuses NUL bytes, over-long paths, folders, FIFOs, missing files and files over max_bytes', async () => {
    expect(await refusal('a\0b.csv')).toEqual({
      code: 'PATH_NOT_ALLOWED',
      message: 'path: "a\\0b.csv" contains a NUL byte; give a plain file path.',
    });
    expect((await refusal('x'.repeat(5000))).message).toBe(`path: "${'x'.repeat(40)}…" is longer than 4096 characters.`);
    expect(await refusal('data')).toEqual({
      code: 'INVALID_ARGUMENT',
      message: 'path: "data" is a folder; give a CSV, TSV, JSON or JSONL file inside it.',
    });
    execFileSync('mkfifo', [join(root.dir, 'pipe.csv')]);
    expect(await refusal('pipe.csv')).toEqual({
      code: 'INVALID_ARGUMENT',
      message: 'path: "pipe.csv" is not a regular file (a FIFO, socket or device); only regular files can be read.',
    });
    expect(await refusal('data/nope.csv')).toEqual({
      code: 'NOT_FOUND',
      message: 'path: "data/nope.csv" does not exist (no "data/nope.csv" under the table root); check the name, e.g. with core-fs.list.',
    });
    writeFileSync(join(root.dir, 'big.csv'), 'x'.repeat(2000));
    expect(await refusal('big.csv', 1024)).toEqual({
      code: 'TOO_LARGE',
      message:
        'path: "big.csv" is 2000 bytes, more than max_bytes = 1024 in [runtime.tools.table]; use a smaller extract or raise the limit.',
    });
  });

  it('resolves the root against the workspace and refuses a missing one', async () => {
    expect(await resolveRoot({ workspaceRoot: root.dir, root: 'data' })).toBe(join(root.dir, 'data'));
    await expect(resolveRoot({ workspaceRoot: root.dir, root: 'nope' })).rejects.toMatchObject({
      code: 'NOT_FOUND',
      message: `The table root ${join(root.dir, 'nope')} does not exist; fix [runtime.tools.table] root (relative paths resolve against the workspace).`,
    });
  });
});
