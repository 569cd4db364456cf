import { spawnSync } from 'node:child_process';
import { lstatSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { describeFileKind } from './describeFileKind.ts';

describe('describeFileKind', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'trellis-kind-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('names each kind of entry as the messages say it', async () => {
    writeFileSync(join(dir, 'file'), 'x');
    mkdirSync(join(dir, 'folder'));
    symlinkSync('file', join(dir, 'link'));
    expect(spawnSync('mkfifo', [join(dir, 'fifo')]).status).toBe(0);
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(join(dir, 'socket'), resolve));
    try {
      expect({
        file: describeFileKind(lstatSync(join(dir, 'file'))),
        folder: describeFileKind(lstatSync(join(dir, 'folder'))),
        link: describeFileKind(lstatSync(join(dir, 'link'))),
        followed: describeFileKind(statSync(join(dir, 'link'))),
        fifo: describeFileKind(lstatSync(join(dir, 'fifo'))),
        socket: describeFileKind(lstatSync(join(dir, 'socket'))),
        device: describeFileKind(statSync('/dev/null')),
      }).toEqual({
        file: 'a regular file',
        folder: 'a folder',
        link: 'a symlink',
        followed: 'a regular file',
        fifo: 'a FIFO (named pipe)',
        socket: 'a socket',
        device: 'a character device',
      });
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
