import { extname } from 'node:path';

/** Extensions whose scripts can run in a worker thread when the skill is named in `in_process`. */
export const WORKER_EXTENSIONS: readonly string[] = ['.js', '.mjs', '.cjs'];

/** The built-in interpreter table; `[runtime.tools.skills] interpreters` is merged over it. */
export function builtinInterpreters(): Record<string, readonly string[]> {
  return {
    '.py': ['python3'],
    '.js': [process.execPath],
    '.mjs': [process.execPath],
    '.cjs': [process.execPath],
    '.sh': ['sh'],
  };
}

/**
 * The argv prefix that runs `scriptPath`: the interpreter for its extension, `[]` for an executable
 * file with no known extension (run directly, its `#!` line decides), or `undefined` when neither applies.
 */
export function resolveInterpreter(options: {
  readonly scriptPath: string;
  readonly mode: number;
  readonly overrides: Readonly<Record<string, string | readonly string[]>>;
}): readonly string[] | undefined {
  const ext = extname(options.scriptPath).toLowerCase();
  const override = options.overrides[ext];
  if (override !== undefined) return typeof override === 'string' ? [override] : override;
  const builtin = builtinInterpreters()[ext];
  if (builtin !== undefined) return builtin;
  return (options.mode & 0o111) !== 0 ? [] : undefined;
}
