import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { writeFileAtomic } from '../src/admin.ts';
import { makeTempDir } from './helpers.ts';

const dirs: Array<{ remove: () => void }> = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) dir.remove();
});

describe('writeFileAtomic (pins and trellis mcp import)', () => {
  it('creates the folders and a private file, replaces a file with the mode asked for, leaves no temp file', async () => {
    const dir = makeTempDir();
    dirs.push(dir);
    const path = join(dir.path, 'a', 'b', 'pins.json');
    await writeFileAtomic(path, 'one\n');
    expect(readFileSync(path, 'utf8')).toBe('one\n');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir.path, 'a', 'b')).mode & 0o777).toBe(0o700);

    const config = join(dir.path, 'runtime.toml');
    writeFileSync(config, 'old\n', { mode: 0o640 });
    await writeFileAtomic(config, 'new\n', { mode: 0o640 });
    expect(readFileSync(config, 'utf8')).toBe('new\n');
    expect(statSync(config).mode & 0o777).toBe(0o640);
    expect(readdirSync(dir.path).sort()).toEqual(['a', 'runtime.toml']);
  });

  it('a failed rename keeps what was there and removes its temp file', async () => {
    const dir = makeTempDir();
    dirs.push(dir);
    const target = join(dir.path, 'taken');
    mkdirSync(join(target, 'inside'), { recursive: true });
    await expect(writeFileAtomic(target, 'text')).rejects.toThrow();
    expect(readdirSync(dir.path)).toEqual(['taken']);
    expect(readdirSync(target)).toEqual(['inside']);
  });
});
