import { ERROR_CODES, ToolError } from '@trellis/sdk';
import { runProcess } from '@trellis/sdk/internal';
import type { SkillScript } from './discoverSkills.ts';
import { formatSeconds, parseSkillStdout, tailOf } from './skillOutput.ts';

/** Variables a skill script inherits from the host, besides `pass_env`. */
export const SKILL_ENV_ALLOW_LIST: readonly string[] = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'LANG',
  'LC_ALL',
  'LC_CTYPE',
  'LC_MESSAGES',
  'TZ',
  'TMPDIR',
];

/** What one skill run needs, whichever way it runs. */
export interface SkillRunRequest {
  readonly skill: string;
  readonly script: SkillScript;
  /** Realpath of the skill folder: the working directory. */
  readonly cwd: string;
  readonly input: unknown;
  readonly timeoutMs: number;
  readonly maxOutputBytes: number;
  readonly env: Readonly<Record<string, string>>;
  readonly signal: AbortSignal;
}

/** The environment a skill sees: the allow list and `pass_env` from the host's, plus `TRELLIS_SKILL_*`. */
export function buildSkillEnv(options: {
  readonly hostEnv: Readonly<Record<string, string | undefined>>;
  readonly passEnv: readonly string[];
  readonly skill: string;
  readonly skillDir: string;
  readonly workspace: string;
}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of [...SKILL_ENV_ALLOW_LIST, ...options.passEnv]) {
    const value = options.hostEnv[key];
    if (value !== undefined) env[key] = value;
  }
  env.PATH ??= '/usr/local/bin:/usr/bin:/bin';
  env.PYTHONDONTWRITEBYTECODE = '1';
  env.TRELLIS_SKILL_NAME = options.skill;
  env.TRELLIS_SKILL_DIR = options.skillDir;
  env.TRELLIS_WORKSPACE = options.workspace;
  return env;
}

/**
 * Runs a skill script as a child process: no shell, its own process group, the reduced
 * environment, cwd the skill folder, the input as JSON on stdin. Resolves to the script's value;
 * every failure is a `ToolError` with a code the model can act on.
 */
export async function runSkillProcess(request: SkillRunRequest, limits: { readonly maxMemoryMb?: number } = {}): Promise<unknown> {
  const [command, ...prefix] = request.script.interpreter.length > 0 ? request.script.interpreter : [request.script.realPath];
  const args = request.script.interpreter.length > 0 ? [...prefix, request.script.realPath] : prefix;
  const label = `skill ${JSON.stringify(request.skill)} (script ${JSON.stringify(request.script.name)})`;
  const result = await runProcess({
    command: command!,
    args,
    cwd: request.cwd,
    env: request.env,
    stdin: `${JSON.stringify(request.input ?? {})}\n`,
    timeoutMs: request.timeoutMs,
    maxOutputBytes: request.maxOutputBytes,
    signal: request.signal,
    ...(limits.maxMemoryMb === undefined ? {} : { maxMemoryMb: limits.maxMemoryMb }),
  });
  if (result.spawnError !== undefined) {
    throw new ToolError(
      ERROR_CODES.TOOL_FAILED,
      `${label} could not be started: ${command} failed with ${result.spawnError}; install ${command} or set [runtime.tools.skills] interpreters for this file type`,
    );
  }
  if (result.timedOut) {
    throw new ToolError(
      ERROR_CODES.TIMEOUT,
      `${label} did not finish within ${formatSeconds(request.timeoutMs)} (run_skill_timeout) and was stopped with all its child processes; ask for less work or raise [runtime.tools.skills] run_skill_timeout`,
    );
  }
  if (result.aborted) throw new ToolError(ERROR_CODES.ABORTED, `${label} was stopped because the call was cancelled`);
  if (result.exitCode !== 0) {
    const how = result.exitCode === null ? `was killed by ${result.signal ?? 'a signal'}` : `exited with code ${result.exitCode}`;
    const stderr = tailOf(result.stderr);
    throw new ToolError(
      ERROR_CODES.TOOL_FAILED,
      `${label} ${how}${stderr === '' ? ' and wrote nothing to stderr' : `; stderr ends with:\n${stderr}`}`,
    );
  }
  if (result.stdoutTruncated) {
    throw new ToolError(
      ERROR_CODES.OUTPUT_TOO_LARGE,
      `${label} wrote more than ${request.maxOutputBytes} bytes to stdout (max_output_bytes); the output was dropped. Ask for a smaller result or raise [runtime.tools.skills] max_output_bytes`,
    );
  }
  return parseSkillStdout(result.stdout);
}
