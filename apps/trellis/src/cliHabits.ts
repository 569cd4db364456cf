import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { CommandLineSwitches } from '@trellis/registry';
import { ConfigError, FailedError, UsageError, exitCodeFor } from './errors.ts';
import type { CommandIO } from './io.ts';
import type { CommandLine } from './parseCommandLine.ts';

/** The `--allow/--enable/--disable` of a command line as `assemble({ commandLine })` takes them; `{}` when none. */
export function commandLineSwitches(line: CommandLine): { commandLine?: CommandLineSwitches } {
  const { allow, enable, disable } = line.flags;
  if (allow === undefined && enable === undefined && disable === undefined) return {};
  return { commandLine: { ...(allow ? { allow } : {}), ...(enable ? { enable } : {}), ...(disable ? { disable } : {}) } };
}

/** What `--json` prints on stdout when a command cannot give its answer. */
export interface JsonError {
  readonly error: {
    /** `USAGE`, `CONFIG_INVALID`, `COMMAND_FAILED`, a command's own code, or `INTERNAL_ERROR`. */
    readonly code: string;
    readonly message: string;
    /** The exit code the process ends with. */
    readonly exit: number;
    /** For `CONFIG_INVALID`: every problem, as `trellis config check --json` lists them. */
    readonly problems?: ReadonlyArray<{ readonly code: string; readonly message: string }>;
  };
}

/** The JSON object an error becomes under `--json`, with the exit code the CLI returns for it. */
export function jsonErrorFor(error: unknown): JsonError {
  const exit = exitCodeFor(error);
  if (error instanceof ConfigError) {
    return {
      error: {
        code: 'CONFIG_INVALID',
        message: `the config cannot be used: ${error.problems.map((p) => p.message).join('; ')}. Run \`trellis config check\` after fixing it.`,
        exit,
        problems: error.problems.map((p) => ({ code: p.code, message: p.message })),
      },
    };
  }
  if (error instanceof UsageError) return { error: { code: 'USAGE', message: error.message, exit } };
  if (error instanceof FailedError) return { error: { code: error.code, message: error.message, exit } };
  const message = error instanceof Error ? error.message : String(error);
  return { error: { code: 'INTERNAL_ERROR', message: `internal error (a bug in Trellis; please report it): ${message}`, exit } };
}

/** True when the raw argv asks for `--json` (checked raw: a usage error may come before parsing ends). */
export function wantsJson(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).includes('--json');
}

/** Under `--json`, writes the error object on stdout (the human message still goes to stderr). */
export function writeJsonError(io: CommandIO, argv: readonly string[], error: unknown): void {
  if (wantsJson(argv)) io.out(`${JSON.stringify(jsonErrorFor(error), null, 2)}\n`);
}

/** Input larger than this from `--args @file` or stdin is refused before it is parsed. */
export const MAX_ARGS_BYTES = 16 * 1024 * 1024;

/**
 * The text of `tools call --args`: inline JSON, `@path` (a file, relative to the current folder)
 * or `-` (standard input), like curl's `--data @file` and `-`.
 */
export async function readArgsText(raw: string, io: CommandIO): Promise<{ text: string; from: string }> {
  if (raw === '-') {
    if (io.readStdin === undefined)
      throw new UsageError('--args - reads standard input, which this host does not provide; pass the JSON inline or as --args @file.json');
    const text = await io.readStdin(MAX_ARGS_BYTES);
    if (text.trim() === '')
      throw new UsageError(
        '--args - read nothing from standard input; pipe the JSON in, e.g. echo \'{"path":"README.md"}\' | trellis tools call core-fs.read_file --args -',
      );
    return { text, from: 'standard input' };
  }
  if (raw.startsWith('@')) {
    const path = resolve(raw.slice(1));
    if (raw.length === 1) throw new UsageError('--args @ needs a file name, e.g. --args @input.json');
    let text: string;
    try {
      const buffer = await readFile(path);
      if (buffer.byteLength > MAX_ARGS_BYTES)
        throw new UsageError(`--args ${raw}: the file is ${buffer.byteLength} bytes, over the ${MAX_ARGS_BYTES}-byte limit`);
      text = buffer.toString('utf8');
    } catch (error) {
      if (error instanceof UsageError) throw error;
      const code = (error as NodeJS.ErrnoException).code;
      throw new UsageError(
        `--args ${raw}: cannot read ${path}${code === 'ENOENT' ? ' (no such file)' : code === 'EISDIR' ? ' (it is a folder)' : code ? ` (${code})` : ''}; give a JSON file, or the JSON inline`,
      );
    }
    return { text, from: path };
  }
  return { text: raw, from: '--args' };
}
