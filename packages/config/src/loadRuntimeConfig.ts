import { dirname, resolve } from 'node:path';
import { failed } from './ConfigProblem.ts';
import type { ConfigLoadResult } from './ConfigProblem.ts';
import { parseRuntimeConfig } from './parseRuntimeConfig.ts';
import { readConfigFile } from './readConfigFile.ts';

/** Options for {@link loadRuntimeConfig}. */
export interface LoadRuntimeConfigOptions {
  /** Where `${VAR}` references are looked up (usually `process.env`). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The uid the file's owner is checked against; default `process.getuid()`. */
  readonly uid?: number;
}

/**
 * Reads and parses one `runtime.toml` on its own (no layers). Relative paths inside it resolve
 * against the folder of `path` (as given, symlinks not followed). Never throws for bad input and
 * never blocks; the file is admitted like a plugin manifest first (`CONFIG_UNSAFE`: hard-linked,
 * world-writable, or owned by another user, the file or its folder). See `readConfigFile`.
 */
export function loadRuntimeConfig(path: string, options: LoadRuntimeConfigOptions): ConfigLoadResult {
  const read = readConfigFile(path, { uid: options.uid });
  if (read.problem !== undefined) return failed([read.problem]);
  return parseRuntimeConfig(read.bytes, { fileName: path, env: options.env, baseDir: dirname(resolve(path)) });
}
