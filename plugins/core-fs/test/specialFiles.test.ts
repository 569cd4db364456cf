import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { Server } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { editTool, listTool, readTool, searchTool, statTool, writeTool } from '../src/index.ts';
import { failureOf, makeFsFixture } from './fsFixture.ts';
import type { FsFixture } from './fsFixture.ts';

// Issue 13, item 8: core-fs.read on a socket threw ENXIO (TOOL_THREW). A socket, FIFO or device is
// refused by name, before anything opens it.

let fx: FsFixture;
let server: Server | undefined;

beforeEach(async () => {
  fx = makeFsFixture();
  mkdirSync(join(fx.ws, 'sub'), { recursive: true });
  writeFileSync(join(fx.ws, 'sub', 'note.txt'), 'a note\n');
  execFileSync('mkfifo', [join(fx.ws, 'pipe')]);
  server = createServer();
  await new Promise<void>((resolve, reject) => {
    server!.once('error', reject);
    server!.listen(join(fx.ws, 'sock'), () => resolve());
  });
});

afterEach(async () => {
  await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));
  server = undefined;
  fx.remove();
});

const SOCKET_READ =
  'path: "sock" is a socket, not a regular file; core-fs reads and writes only regular files and never opens anything else. Use core-fs.stat to look at it.';

describe('sockets and FIFOs are refused cleanly, naming the path and what it is', () => {
  it('read of a socket is INVALID_ARGUMENT, not TOOL_THREW (ENXIO)', async () => {
    expect(await failureOf(fx, () => readTool.run({ path: 'sock' }, fx.context()))).toEqual({
      code: 'INVALID_ARGUMENT',
      message: SOCKET_READ,
    });
  });

  it('read of a FIFO returns at once with INVALID_ARGUMENT (nothing opens it, so nothing blocks)', async () => {
    const failure = await failureOf(fx, () => readTool.run({ path: 'pipe' }, fx.context()));
    expect(failure.code).toBe('INVALID_ARGUMENT');
    expect(failure.message).toContain('"pipe" is a FIFO (named pipe)');
  });

  it('search of a single socket or FIFO is refused the same way; a folder search skips them', async () => {
    expect(await failureOf(fx, () => searchTool.run({ pattern: 'x', path: 'sock' }, fx.context()))).toEqual({
      code: 'INVALID_ARGUMENT',
      message: SOCKET_READ,
    });
    expect((await failureOf(fx, () => searchTool.run({ pattern: 'x', path: 'pipe' }, fx.context()))).code).toBe('INVALID_ARGUMENT');
    const all = await searchTool.run({ pattern: 'note' }, fx.context());
    expect(all.matches.map((m) => m.path)).toEqual(['sub/note.txt']);
  });

  it('write and edit refuse to replace a socket or FIFO', async () => {
    const settings = { allow_write: true };
    expect(await failureOf(fx, () => writeTool.run({ path: 'sock', content: 'x' }, fx.context(settings)))).toEqual({
      code: 'INVALID_ARGUMENT',
      message: 'path: "sock" is a socket; only regular files can be written.',
    });
    expect(await failureOf(fx, () => writeTool.run({ path: 'pipe', content: 'x' }, fx.context(settings)))).toEqual({
      code: 'INVALID_ARGUMENT',
      message: 'path: "pipe" is a FIFO (named pipe); only regular files can be written.',
    });
    expect(await failureOf(fx, () => editTool.run({ path: 'sock', old: 'a', new: 'b' }, fx.context(settings)))).toEqual({
      code: 'INVALID_ARGUMENT',
      message: SOCKET_READ,
    });
  });

  it('stat and list describe them without opening them', async () => {
    expect(await statTool.run({ path: 'sock' }, fx.context())).toMatchObject({ path: 'sock', exists: true, type: 'other' });
    expect(await statTool.run({ path: 'pipe' }, fx.context())).toMatchObject({ path: 'pipe', exists: true, type: 'other' });
    const listed = await listTool.run({}, fx.context());
    expect(listed.entries.map((e) => [e.path, e.type])).toEqual([
      ['pipe', 'other'],
      ['sock', 'other'],
      ['sub', 'directory'],
    ]);
    expect(readFileSync(join(fx.ws, 'sub', 'note.txt'), 'utf8')).toBe('a note\n');
  });
});
