import type { ErrorCode } from '@trellis/sdk';
import type { RuntimeConfig } from './RuntimeConfigSchema.ts';

/** One error or warning about a config file, with where it is. */
export interface ConfigProblem {
  /** A stable code from `ERROR_CODES`. */
  readonly code: ErrorCode;
  /**
   * The whole human-readable line: `<file>[:line[:column]]: [key.path: ]what is wrong and how to fix it`.
   * Never contains the value of an expanded `${VAR}`.
   */
  readonly message: string;
  /** The file name the problem belongs to, as given to the loader. */
  readonly file: string;
  /** Dotted key path (`plugins.entries.telegram.enabled`) when the problem belongs to a key. */
  readonly keyPath?: string;
  /** 1-based line, when known. */
  readonly line?: number;
  /** 1-based column (in characters), when known. */
  readonly column?: number;
}

/** What every config loader returns. `value` is `undefined` whenever `errors` is not empty. */
export interface ConfigLoadResult {
  readonly value: RuntimeConfig | undefined;
  readonly warnings: ConfigProblem[];
  readonly errors: ConfigProblem[];
}

/** The largest config file Trellis reads: 1 MiB. */
export const MAX_CONFIG_BYTES = 1024 * 1024;

/** The most parts a value's key path may have; table-header parts, dotted-key parts and array indices all count. */
export const MAX_CONFIG_DEPTH = 32;

/** Keys rejected anywhere in a config file because they could pollute prototypes. */
export const FORBIDDEN_KEYS: readonly string[] = ['__proto__', 'constructor', 'prototype'];

/** At most this many errors (and, separately, warnings) are reported for one file. */
export const MAX_REPORTED_PROBLEMS = 100;

/** Builds a problem whose message starts with its location. */
export function makeProblem(input: {
  code: ErrorCode;
  file: string;
  text: string;
  keyPath?: string | undefined;
  line?: number | undefined;
  column?: number | undefined;
}): ConfigProblem {
  let where = input.file;
  if (input.line !== undefined) {
    where += `:${input.line}`;
    if (input.column !== undefined) where += `:${input.column}`;
  }
  const keyPart = input.keyPath !== undefined && input.keyPath !== '' ? `${shortKeyPath(input.keyPath)}: ` : '';
  const problem: {
    code: ErrorCode;
    message: string;
    file: string;
    keyPath?: string;
    line?: number;
    column?: number;
  } = { code: input.code, message: `${where}: ${keyPart}${input.text}`, file: input.file };
  if (input.keyPath !== undefined && input.keyPath !== '') problem.keyPath = input.keyPath;
  if (input.line !== undefined) problem.line = input.line;
  if (input.column !== undefined) problem.column = input.column;
  return problem;
}

/** Keeps messages readable when a hostile file has a very long key path. */
function shortKeyPath(keyPath: string): string {
  return keyPath.length <= 200 ? keyPath : `${keyPath.slice(0, 200)}…`;
}

/** A result with errors and therefore no value. */
export function failed(errors: ConfigProblem[], warnings: ConfigProblem[] = []): ConfigLoadResult {
  return { value: undefined, warnings, errors };
}
