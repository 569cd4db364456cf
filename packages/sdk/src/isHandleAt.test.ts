import { mkdirSync, mkdtempSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { descriptorPath, hasDescriptorPaths, isHandleAt } from './isHandleAt.ts';

let base: string;

beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'trellis-handle-')));
  mkdirSync(join(base, 'inside'));
  mkdirSync(join(base, 'outside'));
  writeFileSync(join(base, 'inside', 'a.txt'), 'inside');
  writeFileSync(join(base, 'outside', 'a.txt'), 'outside');
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

describe('isHandleAt', () => {
  it('is true for a file opened at its own symlink-free path', async () => {
    const handle = await open(join(base, 'inside', 'a.txt'));
    try {
      expect(await isHandleAt(handle, join(base, 'inside', 'a.txt'))).toBe(true);
    } finally {
      await handle.close();
    }
  });

  it('is false when a folder on the way was a symlink leading elsewhere at open time', async () => {
    symlinkSync(join(base, 'outside'), join(base, 'link'));
    const handle = await open(join(base, 'link', 'a.txt'));
    try {
      expect(await isHandleAt(handle, join(base, 'link', 'a.txt'))).toBe(false);
      expect(await isHandleAt(handle, join(base, 'inside', 'a.txt'))).toBe(false);
      expect(await isHandleAt(handle, join(base, 'outside', 'a.txt'))).toBe(true);
    } finally {
      await handle.close();
    }
  });

  it('is false once the opened folder has moved away from the path', async () => {
    const handle = await open(join(base, 'inside'));
    try {
      renameSync(join(base, 'inside'), join(base, 'moved'));
      expect(await isHandleAt(handle, join(base, 'inside'))).toBe(false);
      expect(await isHandleAt(handle, join(base, 'moved'))).toBe(true);
    } finally {
      await handle.close();
    }
  });
});

describe('descriptorPath', () => {
  it('reaches names inside the opened folder even after the path to it was swapped for a symlink', async () => {
    expect(await hasDescriptorPaths()).toBe(process.platform === 'linux');
    const handle = await open(join(base, 'inside'));
    try {
      const anchor = await descriptorPath(handle);
      expect(anchor).toBe(`/proc/self/fd/${handle.fd}`);
      renameSync(join(base, 'inside'), join(base, 'kept'));
      symlinkSync(join(base, 'outside'), join(base, 'inside'));
      const through = await open(`${anchor}/a.txt`);
      try {
        expect(await through.readFile('utf8')).toBe('inside');
      } finally {
        await through.close();
      }
    } finally {
      await handle.close();
    }
  });
});
