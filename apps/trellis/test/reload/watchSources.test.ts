import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { watchSources, type SourceWatch } from '../../src/reload/watchSources.ts';

// The config file's watches are node:fs.watch, which follows inodes, not paths: a folder renamed
// away and made again, or a file removed and made again, must still be seen by its path.

let dir: string;
let watch: SourceWatch | undefined;
afterEach(async () => {
  await watch?.close();
  watch = undefined;
  rmSync(dir, { recursive: true, force: true });
});

async function watching(config: string): Promise<{ next(limitMs?: number): Promise<readonly string[] | undefined> }> {
  const bursts: Array<readonly string[]> = [];
  let wake: (() => void) | undefined;
  watch = await watchSources(
    { configFiles: [config], pluginRoots: [] },
    {
      debounceMs: 20,
      onChange: ({ paths }) => {
        bursts.push(paths);
        wake?.();
      },
    },
  );
  await watch.ready;
  return {
    async next(limitMs = 5_000) {
      if (bursts.length === 0) await new Promise<void>((resolve) => ((wake = resolve), setTimeout(resolve, limitMs)));
      wake = undefined;
      return bursts.shift();
    },
  };
}

/** A config file in its own folder `cfg`, watched. */
async function watchingFolder() {
  dir = mkdtempSync(join(tmpdir(), 'trellis-watch-'));
  const folder = join(dir, 'cfg');
  const config = join(folder, 'runtime.toml');
  mkdirSync(folder);
  writeFileSync(config, 'a = 1\n');
  return { folder, config, changes: await watching(config) };
}

const save = (file: string, text: string): void => {
  writeFileSync(`${file}.tmp`, text);
  renameSync(`${file}.tmp`, file);
};

describe('watchSources: config files by path', () => {
  it('sees its folder renamed away, not the old folder afterwards, and the new folder once it follows again', async () => {
    const { folder, config, changes } = await watchingFolder();

    save(config, 'a = 2\n');
    expect(await changes.next()).toEqual([config]);

    renameSync(folder, `${folder}.old`);
    expect(await changes.next()).toEqual([config]);
    // The old folder is not the config's any more: its edits are not the config's.
    save(join(`${folder}.old`, 'runtime.toml'), 'a = 3\n');
    expect(await changes.next(400)).toBeUndefined();

    // Made again: from the next reload on (here update(), as a SIGHUP's reload runs it) it is seen.
    mkdirSync(folder);
    writeFileSync(config, 'a = 4\n');
    watch!.update({ configFiles: [config], pluginRoots: [] });
    save(config, 'a = 5\n');
    expect(await changes.next()).toEqual([config]);
  });

  it('sees the file removed and made again, and edits after that', async () => {
    dir = mkdtempSync(join(tmpdir(), 'trellis-watch-'));
    const config = join(dir, 'runtime.toml');
    writeFileSync(config, 'a = 1\n');
    const changes = await watching(config);

    rmSync(config);
    expect(await changes.next()).toEqual([config]);
    writeFileSync(config, 'a = 2\n');
    expect(await changes.next()).toEqual([config]);
    save(config, 'a = 3\n');
    expect(await changes.next()).toEqual([config]);
    writeFileSync(config, 'a = 4\n'); // in place
    expect(await changes.next()).toEqual([config]);
  });

  it('follows a folder removed and made again once a reload has run', async () => {
    const { folder, config, changes } = await watchingFolder();

    rmSync(folder, { recursive: true });
    expect(await changes.next()).toEqual([config]);
    mkdirSync(folder);
    writeFileSync(config, 'a = 2\n');
    watch!.update({ configFiles: [config], pluginRoots: [] });
    rmSync(config);
    expect(await changes.next()).toEqual([config]);
    writeFileSync(config, 'a = 3\n');
    expect(await changes.next()).toEqual([config]);
    save(config, 'a = 4\n');
    expect(await changes.next()).toEqual([config]);
  });
});
