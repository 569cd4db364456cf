import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, type Stats } from 'node:fs';
import { MAX_MANIFEST_BYTES } from '@trellis/sdk';
import type { ManifestReadMemo } from './ManifestReadMemo.ts';
import { errnoOf, toStatFacts } from './statFacts.ts';
import type { ReadRefusal, StatFacts } from './types.ts';

// O_NOFOLLOW and O_NONBLOCK are POSIX; on a platform without them the flags are 0 and the
// fstat check on the handle still refuses anything that is not a regular file.
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/** What reading one manifest gave: its facts and bytes, or why it was refused. */
export interface ReadOutcome {
  readonly lstat: StatFacts | null;
  readonly stat: StatFacts | null;
  readonly bytes: Uint8Array | null;
  readonly refusal: ReadRefusal | null;
}

// Bytes kept per manifest are views into shared 64 KiB slabs, filled front to back and never
// written twice: 10,000 manifests make ~100 ArrayBuffers instead of 10,000. A view's `byteOffset`
// is not 0; every reader takes the view, not `.buffer`.
const SLAB_BYTES = 64 * 1024;

/**
 * Reads manifests for one discovery run: never follows a final symlink, never blocks, never opens
 * anything but a regular file. Holds its read buffer and its slab, so nothing is shared between
 * runs.
 */
export class ManifestReader {
  private readonly buffer = Buffer.allocUnsafe(MAX_MANIFEST_BYTES + 1);
  private slab: Uint8Array | null = null;
  private slabUsed = 0;

  /**
   * Reads a manifest by its realpath: `lstat` first (or the one the walk already made), so a FIFO
   * or device is never opened, then open O_NOFOLLOW|O_NONBLOCK and `fstat` the handle, so what is
   * checked is what is read even if the path was swapped in between.
   */
  read(real: string | null, known: StatFacts | null, unresolved?: string): ReadOutcome {
    if (real === null) {
      const message =
        unresolved === 'ELOOP'
          ? 'the path is a symlink loop (following it leads back to itself)'
          : unresolved === undefined || unresolved === 'ENOENT'
            ? 'the path is a symlink whose target does not exist'
            : `the path cannot be resolved (${unresolved})`;
      return { lstat: null, stat: null, bytes: null, refusal: { kind: 'DANGLING', message } };
    }
    let lstat: StatFacts | null = known;
    if (lstat === null) {
      try {
        lstat = toStatFacts(lstatSync(real));
      } catch (error) {
        return { lstat: null, stat: null, bytes: null, refusal: { kind: 'OPEN_FAILED', message: `cannot stat it (${errnoOf(error)})` } };
      }
    }
    const outcome = this.readByType(real, lstat);
    if (typeof outcome !== 'string') return outcome;
    return { lstat, stat: null, bytes: null, refusal: { kind: 'OPEN_FAILED', message: `cannot open it (${outcome})` } };
  }

  /**
   * {@link ManifestReader.readByType}, or the read an earlier run made when `memo` says the file
   * is the same and untouched since (`stats`, the walk's `lstat` of it, with its times).
   */
  readRemembered(path: string, lstat: StatFacts, stats: Stats, memo: ManifestReadMemo): ReadOutcome | string {
    const known = memo.lookup(path, lstat, stats);
    if (known !== undefined) return { ...known, lstat };
    const startedAt = memo.now();
    const outcome = this.readByType(path, lstat);
    return typeof outcome === 'string' ? outcome : memo.remember(path, lstat, stats, outcome, startedAt);
  }

  /**
   * The read of a path whose `lstat` is known: anything but a regular file within the size limit
   * is refused by that type and never opened; a regular file is opened and read. The errno when
   * the open fails.
   */
  readByType(path: string, lstat: StatFacts): ReadOutcome | string {
    const early = refuse(lstat);
    if (early !== null) return { lstat, stat: lstat, bytes: null, refusal: early };
    let fd: number;
    try {
      fd = openSync(path, OPEN_FLAGS);
    } catch (error) {
      return errnoOf(error);
    }
    return this.readOpened(fd, lstat);
  }

  /** Reads an open manifest (and closes it): `fstat` the handle, refuse anything but a regular file, read at most the limit + 1. */
  private readOpened(fd: number, lstat: StatFacts): ReadOutcome {
    try {
      const stat = toStatFacts(fstatSync(fd));
      const refusal = refuse(stat);
      if (refusal !== null) return { lstat, stat, bytes: null, refusal };
      // Read to the limit + 1 whatever fstat said: a file may grow between fstat and read.
      const buffer = this.buffer;
      let length = 0;
      for (;;) {
        const wanted = buffer.length - length;
        const n = readSync(fd, buffer, length, wanted, null);
        length += n;
        if (length > MAX_MANIFEST_BYTES) {
          return {
            lstat,
            stat,
            bytes: null,
            refusal: { kind: 'TOO_LARGE', message: `it holds more than the ${MAX_MANIFEST_BYTES}-byte limit` },
          };
        }
        if (n === 0) break;
        // A regular file on a disk reads short only at its end, which fstat's size says: no extra
        // read() to see 0. A file whose size says nothing (procfs and the like report 0, and
        // read short before their end) is read until read() returns 0.
        if (n < wanted && stat.size > 0 && length >= stat.size) break;
      }
      return { lstat, stat, bytes: this.keep(length), refusal: null };
    } catch (error) {
      return { lstat, stat: null, bytes: null, refusal: { kind: 'READ_FAILED', message: `cannot read it (${errnoOf(error)})` } };
    } finally {
      closeSync(fd);
    }
  }

  /** A copy of the buffer's first `length` bytes that stays valid: a fresh view into the current slab. */
  private keep(length: number): Uint8Array {
    if (length > SLAB_BYTES / 4) return Uint8Array.prototype.slice.call(this.buffer, 0, length);
    if (this.slab === null || this.slabUsed + length > this.slab.length) {
      this.slab = new Uint8Array(SLAB_BYTES);
      this.slabUsed = 0;
    }
    this.slab.set(this.buffer.subarray(0, length), this.slabUsed);
    const view = this.slab.subarray(this.slabUsed, this.slabUsed + length);
    this.slabUsed += length;
    return view;
  }
}

/**
 * `bytes` with a buffer of their own: a copy when they are a view into a reader's shared 64 KiB
 * slab, which anything kept across runs would otherwise hold on to whole.
 */
export function ownBytes(bytes: Uint8Array): Uint8Array {
  return bytes.byteLength === bytes.buffer.byteLength ? bytes : new Uint8Array(bytes);
}

function refuse(stat: StatFacts): ReadRefusal | null {
  if (stat.type !== 'file') return { kind: 'NOT_REGULAR', message: `it is a ${stat.type}, not a regular file` };
  if (stat.size > MAX_MANIFEST_BYTES)
    return { kind: 'TOO_LARGE', message: `it is ${stat.size} bytes, more than the ${MAX_MANIFEST_BYTES}-byte limit` };
  return null;
}
