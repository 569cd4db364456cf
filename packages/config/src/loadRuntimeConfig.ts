import { Buffer } from 'node:buffer';
import { closeSync, constants, fstatSync, openSync, readSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { ERROR_CODES, describeFileKind } from '@trellis/sdk';
import { MAX_CONFIG_BYTES, failed, makeProblem } from './ConfigProblem.ts';
import type { ConfigLoadResult, ConfigProblem } from './ConfigProblem.ts';
import { parseRuntimeConfig } from './parseRuntimeConfig.ts';
import { tooLargeProblem as tooLarge } from './decodeConfigText.ts';

/** Options for {@link loadRuntimeConfig}. */
export interface LoadRuntimeConfigOptions {
  /** Where `${VAR}` references are looked up (usually `process.env`). */
  readonly env: Readonly<Record<string, string | undefined>>;
}

/** Internal: what `resolveRuntimeConfig` adds when it loads a file it found. */
export interface LoadConfigFileOptions extends LoadRuntimeConfigOptions {
  /** Appended to the CONFIG_NOT_FOUND message: where the path came from and what to do. */
  readonly notFoundHint?: string;
}

/**
 * Reads and parses one `runtime.toml`. Relative paths inside it resolve against the folder of
 * `path` (as given, symlinks not followed). Never throws for bad input and never blocks: the
 * file is opened non-blocking and checked with `fstat` before any read, so a FIFO, device or
 * directory is refused at once, and at most 1 MiB + 1 byte is ever read.
 */
export function loadRuntimeConfig(path: string, options: LoadRuntimeConfigOptions): ConfigLoadResult {
  return loadConfigFile(path, options);
}

/** {@link loadRuntimeConfig} with a source-specific hint for a missing file. */
export function loadConfigFile(path: string, options: LoadConfigFileOptions): ConfigLoadResult {
  const read = readConfigBytes(path, options.notFoundHint);
  if (read.problem !== undefined) return failed([read.problem]);
  return parseRuntimeConfig(read.bytes, { fileName: path, env: options.env, baseDir: dirname(resolve(path)) });
}

const POINT_AT_FILE = 'point --config or TRELLIS_CONFIG at a runtime.toml file';

type ReadResult = { bytes: Uint8Array; problem?: undefined } | { bytes?: undefined; problem: ConfigProblem };

function readConfigBytes(file: string, notFoundHint: string | undefined): ReadResult {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (error) {
    return { problem: openFailure(file, error, notFoundHint) };
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) {
      return {
        problem: makeProblem({
          code: ERROR_CODES.CONFIG_UNREADABLE,
          file,
          text: `is ${describeFileKind(stats)}, not a regular file; ${POINT_AT_FILE}`,
        }),
      };
    }
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
      return makeProblem({ code: ERROR_CODES.CONFIG_UNREADABLE, file, text: 'permission denied; make the file readable by the user running trellis' });
    case 'ELOOP':
      return makeProblem({ code: ERROR_CODES.CONFIG_UNREADABLE, file, text: 'too many levels of symbolic links (a symlink loop?); point at the real file' });
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
  return makeProblem({ code: ERROR_CODES.CONFIG_UNREADABLE, file, text: `cannot be read (${errorCode(error)}); check the path and its permissions` });
}
