import { Buffer } from 'node:buffer';
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, realpathSync, statSync } from 'node:fs';
import type { Stats } from 'node:fs';
import { dirname } from 'node:path';
import { ERROR_CODES } from '@trellis/sdk';
import { describeFileKind } from '@trellis/sdk/internal';
import { admitConfigFile } from './admitConfigFile.ts';
import type { ConfigStatFacts } from './admitConfigFile.ts';
import { MAX_CONFIG_BYTES, makeProblem } from './ConfigProblem.ts';
import type { ConfigProblem } from './ConfigProblem.ts';
import { tooLargeProblem as tooLarge } from './decodeConfigText.ts';

/** Options of {@link readConfigFile}. */
export interface ReadConfigFileOptions {
  /** Appended to the CONFIG_NOT_FOUND message: where the path came from and what to do. */
  readonly notFoundHint?: string | undefined;
  /** The uid the owner checks compare against; default `process.getuid()`. */
  readonly uid?: number | undefined;
  /** What the file is, for the "not a regular file" message. Default: a runtime.toml. */
  readonly pointAt?: string | undefined;
}

/** The bytes of an admitted file, or the one problem that stopped it. */
export type ReadConfigResult =
  { readonly bytes: Uint8Array; readonly problem?: undefined } | { readonly bytes?: undefined; readonly problem: ConfigProblem };

const POINT_AT_FILE = 'point --config or TRELLIS_CONFIG at a runtime.toml file';

/** The current uid (0 where the platform has none). */
export function currentUid(): number {
  return typeof process.getuid === 'function' ? process.getuid() : 0;
}

/**
 * Opens, admits and reads one config file. Never throws for bad input and never blocks: the file
 * is opened non-blocking and checked with `fstat` before any read, so a FIFO, device or directory
 * is refused at once (`CONFIG_UNREADABLE`); then it is admitted like a plugin manifest
 * ({@link admitConfigFile}: `CONFIG_UNSAFE`); at most 1 MiB + 1 byte is ever read.
 */
export function readConfigFile(file: string, options: ReadConfigFileOptions = {}): ReadConfigResult {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (error) {
    return { problem: openFailure(file, error, options.notFoundHint) };
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) {
      return {
        problem: makeProblem({
          code: ERROR_CODES.CONFIG_UNREADABLE,
          file,
          text: `is ${describeFileKind(stats)}, not a regular file; ${options.pointAt ?? POINT_AT_FILE}`,
        }),
      };
    }
    const unsafe = admit(file, stats, options.uid ?? currentUid());
    if (unsafe !== undefined) return { problem: unsafe };
    if (stats.size > MAX_CONFIG_BYTES) return { problem: tooLarge(file, `${stats.size} bytes`) };
    // Read at most one byte past the limit, whatever fstat said: the file may grow meanwhile.
    let buffer = Buffer.allocUnsafe(Math.min(stats.size, MAX_CONFIG_BYTES) + 1);
    let length = 0;
    for (;;) {
      if (length === buffer.length) {
        if (buffer.length > MAX_CONFIG_BYTES) break;
        const bigger = Buffer.allocUnsafe(Math.min(buffer.length * 2, MAX_CONFIG_BYTES + 1));
        buffer.copy(bigger, 0, 0, length);
        buffer = bigger;
      }
      const n = readSync(fd, buffer, length, buffer.length - length, null);
      if (n === 0) break;
      length += n;
    }
    if (length > MAX_CONFIG_BYTES) return { problem: tooLarge(file, `more than ${MAX_CONFIG_BYTES} bytes`) };
    return { bytes: buffer.subarray(0, length) };
  } catch (error) {
    return { problem: readFailure(file, error) };
  } finally {
    closeSync(fd);
  }
}

function statFacts(stats: Stats): ConfigStatFacts {
  return { mode: stats.mode, uid: stats.uid, nlink: stats.nlink };
}

/** Gathers the facts {@link admitConfigFile} needs: the opened file's stat and every folder above its real path. */
function admit(file: string, stats: Stats, uid: number): ConfigProblem | undefined {
  let real: string;
  try {
    real = realpathSync(file);
  } catch {
    real = file;
  }
  const folders: Array<{ path: string; stat: ConfigStatFacts | null }> = [];
  for (let folder = dirname(real); ; folder = dirname(folder)) {
    let stat: ConfigStatFacts | null = null;
    try {
      stat = statFacts(lstatSync(folder));
    } catch {
      stat = null;
    }
    folders.push({ path: folder, stat });
    if (dirname(folder) === folder) break;
  }
  return admitConfigFile({ file, real, stat: statFacts(stats), folders, uid });
}

function errorCode(error: unknown): string {
  return typeof error === 'object' && error !== null && 'code' in error ? String((error as { code: unknown }).code) : 'UNKNOWN';
}

function openFailure(file: string, error: unknown, notFoundHint: string | undefined): ConfigProblem {
  const code = errorCode(error);
  const hint = notFoundHint === undefined ? '' : `; ${notFoundHint}`;
  switch (code) {
    case 'ENOENT':
      return makeProblem({ code: ERROR_CODES.CONFIG_NOT_FOUND, file, text: `no such file${hint}` });
    case 'ENOTDIR':
      return makeProblem({ code: ERROR_CODES.CONFIG_NOT_FOUND, file, text: `no such file (a part of the path is not a folder)${hint}` });
    case 'EACCES':
    case 'EPERM':
      return makeProblem({
        code: ERROR_CODES.CONFIG_UNREADABLE,
        file,
        text: 'permission denied; make the file readable by the user running trellis',
      });
    case 'ELOOP':
      return makeProblem({
        code: ERROR_CODES.CONFIG_UNREADABLE,
        file,
        text: 'too many levels of symbolic links (a symlink loop?); point at the real file',
      });
    case 'ENXIO': {
      // A socket (or a device with no driver behind it): open refuses, stat still says which.
      let kind = 'a special file';
      try {
        const stats = statSync(file, { throwIfNoEntry: false });
        if (stats !== undefined) kind = describeFileKind(stats);
      } catch {
        // keep the generic word
      }
      return makeProblem({ code: ERROR_CODES.CONFIG_UNREADABLE, file, text: `is ${kind}, not a regular file; ${POINT_AT_FILE}` });
    }
    default:
      return readFailure(file, error);
  }
}

function readFailure(file: string, error: unknown): ConfigProblem {
  return makeProblem({
    code: ERROR_CODES.CONFIG_UNREADABLE,
    file,
    text: `cannot be read (${errorCode(error)}); check the path and its permissions`,
  });
}
