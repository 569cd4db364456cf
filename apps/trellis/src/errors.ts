/** Exit codes of the `trellis` command. */
export const EXIT = {
  /** Everything worked. */
  OK: 0,
  /** A check or a tool failed. */
  FAILED: 1,
  /** Bad usage or a config error: fix the command line or the config and run again. */
  USAGE: 2,
} as const;

/** The command line is wrong: unknown command or flag, missing argument. Exit 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** One config problem as the CLI prints it. */
export interface ConfigProblemView {
  readonly code: string;
  readonly message: string;
}

/** The config cannot be used; every problem is listed. Exit 2. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  readonly problems: readonly ConfigProblemView[];

  constructor(problems: readonly ConfigProblemView[]) {
    super(problems.map((p) => p.message).join('\n'));
    this.problems = problems;
  }
}

/** A check or tool failed after it was reported; the CLI only sets the exit code. Exit 1. */
export class FailedError extends Error {
  override readonly name = 'FailedError';
  /** The stable code `--json` reports; default `COMMAND_FAILED`. */
  readonly code: string;

  constructor(message: string, code = 'COMMAND_FAILED') {
    super(message);
    this.code = code;
  }
}

/** The one mapping from an error to an exit code. */
export function exitCodeFor(error: unknown): number {
  if (error instanceof UsageError || error instanceof ConfigError) return EXIT.USAGE;
  return EXIT.FAILED;
}
