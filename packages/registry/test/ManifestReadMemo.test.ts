import { execFileSync } from 'node:child_process';
import { chmodSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { discoverCandidates } from '../src/index.ts';
import { createManifestReadMemo, memoizableFileSystem, SETTLED_MS, type ManifestReadMemo } from '../src/ManifestReadMemo.ts';
import { ManifestReader } from '../src/readManifestFile.ts';
import { walkPluginRoot } from '../src/walkPluginRoot.ts';
import type { ExternalCandidateFacts } from '../src/types.ts';
import { fileRoot, makeTree, manifestText } from './helpers.ts';

/** One discovery run of `<base>/plugins` with `memo`, as a live host's build makes it; alpha's facts. */
function discover(base: string, memo: ManifestReadMemo): ExternalCandidateFacts {
  const { candidates } = discoverCandidates({
    roots: [fileRoot(join(base, 'plugins'))],
    bundled: [],
    buildCache: { keepServing: (facts) => facts, sameFacts: (facts) => facts, readMemo: memo },
  });
  const alpha = candidates.find((c): c is ExternalCandidateFacts => !c.bundled && c.manifestPath.endsWith('alpha/plugin.toml'));
  if (alpha === undefined) throw new Error('alpha was not discovered');
  return alpha;
}

/** Sets a file's mtime to the nanosecond (`utimes` from JavaScript rounds it). */
function setMtimeNs(path: string, ns: bigint): void {
  const seconds = ns / 1_000_000_000n;
  const fraction = (ns % 1_000_000_000n).toString().padStart(9, '0');
  execFileSync('touch', ['-m', '-d', `@${seconds}.${fraction}`, path]);
}
const text = (description: string): string => manifestText({ id: 'alpha', description });
const decoded = (facts: ExternalCandidateFacts): string => Buffer.from(facts.bytes!).toString('utf8');
/** A memo whose clock runs a minute ahead: every file written by the test has settled. */
const settledMemo = (): ManifestReadMemo => createManifestReadMemo({ now: () => Date.now() + 60_000 });

describe('ManifestReadMemo', () => {
  it('takes the read of an untouched, settled manifest over without opening it again', () => {
    const base = makeTree({ 'plugins/alpha/plugin.toml': text('first') });
    const memo = settledMemo();
    const first = discover(base, memo);
    const second = discover(base, memo);
    // The very bytes of the first run: nothing was read again. (Where the temp folder is on a file
    // system the memo does not trust, such as any on macOS, it is read again: the memo is unused.)
    expect(second.bytes === first.bytes).toBe(memoizableFileSystem(base));
    expect(decoded(second)).toBe(text('first'));
  });

  it('reads a manifest again after an edit that keeps its size and puts its mtime back', () => {
    const base = makeTree({ 'plugins/alpha/plugin.toml': text('first') });
    const path = join(base, 'plugins', 'alpha', 'plugin.toml');
    const memo = settledMemo();
    const before = statSync(path, { bigint: true });
    discover(base, memo);
    writeFileSync(path, text('other'));
    // `touch -d`, to the nanosecond: the mtime is what it was; the ctime cannot be set back.
    setMtimeNs(path, before.mtimeNs);
    const after = statSync(path, { bigint: true });
    expect([after.size, after.mtimeNs, after.ino]).toEqual([before.size, before.mtimeNs, before.ino]);
    expect(decoded(discover(base, memo))).toBe(text('other'));
  });

  it('reads a manifest again when another file with the same content and times is renamed over it', () => {
    const base = makeTree({ 'plugins/alpha/plugin.toml': text('first') });
    const path = join(base, 'plugins', 'alpha', 'plugin.toml');
    const memo = settledMemo();
    const first = discover(base, memo);
    writeFileSync(`${path}.new`, text('first'));
    setMtimeNs(`${path}.new`, statSync(path, { bigint: true }).mtimeNs);
    renameSync(`${path}.new`, path);
    const second = discover(base, memo);
    expect(second.bytes).not.toBe(first.bytes);
    expect(second.manifestLstat?.ino).toBe(statSync(path).ino);
  });

  it('judges the file as it is now: a chmod is read again and seen', () => {
    const base = makeTree({ 'plugins/alpha/plugin.toml': text('first') });
    const path = join(base, 'plugins', 'alpha', 'plugin.toml');
    const memo = settledMemo();
    const first = discover(base, memo);
    chmodSync(path, 0o666);
    const second = discover(base, memo);
    expect(second.bytes).not.toBe(first.bytes);
    expect(second.manifestLstat!.mode & 0o777).toBe(0o666);
    expect(second.manifestStat!.mode & 0o777).toBe(0o666);
  });

  it(`does not keep the read of a file changed less than ${SETTLED_MS} ms before it was read`, () => {
    const base = makeTree({ 'plugins/alpha/plugin.toml': text('first') });
    // The real clock: the manifest was written just now, and a write in the same clock tick
    // could keep its timestamps.
    const memo = createManifestReadMemo();
    const first = discover(base, memo);
    const second = discover(base, memo);
    expect(second.bytes).not.toBe(first.bytes);
    expect(decoded(second)).toBe(text('first'));
  });

  it('forgets the reads of manifests a run no longer reaches', () => {
    const base = makeTree({ 'plugins/alpha/plugin.toml': text('first') });
    const memo = settledMemo();
    const first = discover(base, memo);
    // A run that does not reach it (its folder is moved aside; the file itself is untouched, so
    // its ctime stays), then the folder back: the memo no longer has it, and it is read again.
    renameSync(join(base, 'plugins', 'alpha'), join(base, 'alpha-aside'));
    discoverCandidates({
      roots: [fileRoot(join(base, 'plugins'))],
      bundled: [],
      buildCache: { keepServing: (facts) => facts, sameFacts: (facts) => facts, readMemo: memo },
    });
    renameSync(join(base, 'alpha-aside'), join(base, 'plugins', 'alpha'));
    const third = discover(base, memo);
    expect(third.bytes).not.toBe(first.bytes);
    expect(decoded(third)).toBe(text('first'));
    // Read, and kept again: the next run takes it over.
    expect(discover(base, memo).bytes === third.bytes).toBe(memoizableFileSystem(base));
  });

  it('reads a manifest on another device than its root every time (a share mounted inside a local root)', () => {
    const base = makeTree({ 'plugins/alpha/plugin.toml': text('first') });
    const root = join(base, 'plugins');
    const memo = settledMemo();
    const walk = (device: number) => walkPluginRoot(root, new ManifestReader(), { memo, device }).entries[0]!.read!;
    const device = statSync(root).dev;
    // The root's device: the second read is the first one taken over.
    const first = walk(device);
    expect(walk(device).bytes).toBe(first.bytes);
    // A device that is not the file's: the memo is not asked, and the file is read.
    expect(walk(device + 1).bytes).not.toBe(first.bytes);
  });

  it('never keeps a read of another file: a folder swapped between the lstat and the open', () => {
    const base = makeTree({
      'plugins/alpha/plugin.toml': text('the real one'),
      'elsewhere/plugin.toml': text('swapped in'),
    });
    const alpha = join(base, 'plugins', 'alpha');
    const elsewhere = join(base, 'elsewhere');
    // World-writable: the real one is to be rejected, the other one not.
    chmodSync(join(alpha, 'plugin.toml'), 0o666);
    const swap = (): void => {
      renameSync(alpha, join(base, 'aside'));
      renameSync(elsewhere, alpha);
      renameSync(join(base, 'aside'), elsewhere);
    };
    const settled = settledMemo();
    let swapNow = true;
    // The reader asks the clock right after its lookup and before it opens the file: the swap
    // lands exactly between the walk's lstat and the open.
    const memo: ManifestReadMemo = {
      ...settled,
      now: () => {
        if (swapNow) {
          swapNow = false;
          swap();
        }
        return settled.now();
      },
    };
    const raced = discover(base, memo);
    expect(decoded(raced)).toBe(text('swapped in'));
    // Put back as it was: the real manifest's ctime did not change.
    swap();
    for (let run = 0; run < 2; run += 1) {
      const facts = discover(base, memo);
      expect(decoded(facts)).toBe(text('the real one'));
      expect(facts.manifestStat!.mode & 0o777).toBe(0o666);
    }
  });

  it('keeps bytes of its own, not a view into the reader’s 64 KiB slab', () => {
    const base = makeTree({ 'plugins/alpha/plugin.toml': text('first'), 'plugins/beta/plugin.toml': manifestText({ id: 'beta' }) });
    const memo = settledMemo();
    const kept = discover(base, memo).bytes!;
    expect(kept.byteOffset).toBe(0);
    expect(kept.buffer.byteLength).toBe(kept.byteLength);
  });

  it('is used only where lstat is authoritative: not on a file system it does not know', () => {
    expect(memoizableFileSystem('/proc')).toBe(false);
    expect(memoizableFileSystem('/no/such/path')).toBe(false);
  });
});
