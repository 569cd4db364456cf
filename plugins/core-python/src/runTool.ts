import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { ERROR_CODES, ToolError, defineTool } from '@trellis/sdk';
import { canLimitResources, isPathInside, runProcess } from '@trellis/sdk/internal';
import type { ToolContext } from '@trellis/sdk';
import type { PythonSettings } from './PythonSettingsSchema.ts';
import { resolveInterpreter } from './resolveInterpreter.ts';

/** Largest program accepted, in characters. */
const MAX_CODE_CHARS = 200_000;
/** Largest stdin accepted, in characters. */
const MAX_STDIN_CHARS = 1_048_576;

/** Input of `core-python.run`. */
export const PythonRunInputSchema = z
  .object({
    code: z
      .string()
      .min(1)
      .max(MAX_CODE_CHARS)
      .describe(
        'A complete Python 3 program, run as a script file (main.py). Print what you want to see: only stdout and stderr come back. ' +
          `At most ${MAX_CODE_CHARS} characters.`,
      ),
    stdin: z
      .string()
      .max(MAX_STDIN_CHARS)
      .optional()
      .describe('Text given to the program on standard input (sys.stdin). Omit for an empty stdin.'),
  })
  .strict();

/** Input of `core-python.run`. */
export type PythonRunInput = z.infer<typeof PythonRunInputSchema>;

/** What `core-python.run` returns. */
export interface PythonRunResult {
  /** Exit code, or null when a signal ended the program (timeout, memory, CPU limit). */
  readonly exit_code: number | null;
  readonly signal: string | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly stdout_truncated: boolean;
  readonly stderr_truncated: boolean;
  /** True when the program was killed at the deadline. */
  readonly timed_out: boolean;
  readonly duration_ms: number;
  /** Which OS limits were applied to this run. */
  readonly limits: {
    readonly timeout_seconds: number;
    readonly memory_mb: number | null;
    readonly cpu_seconds: number | null;
  };
  /** One line for the reader: how the run ended and what to do about it. */
  readonly summary: string;
}

/** The environment the interpreter gets: nothing of the host's but PATH and HOME. */
function childEnv(ctx: ToolContext<PythonSettings>, tempDir: string): Record<string, string> {
  const env: Record<string, string> = {
    PATH: ctx.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
    PYTHONIOENCODING: 'utf-8',
    PYTHONUNBUFFERED: '1',
    PYTHONDONTWRITEBYTECODE: '1',
    TMPDIR: tempDir,
  };
  if (ctx.env.HOME !== undefined) env.HOME = ctx.env.HOME;
  return env;
}

/** Creates `<workspace>/.trellis/tmp/python-XXXXXX`, refusing when `.trellis/tmp` resolves outside the workspace. */
async function makeTempDir(workspaceRoot: string): Promise<string> {
  let root: string;
  let base: string;
  let realBase: string;
  try {
    root = await realpath(workspaceRoot);
    base = join(root, '.trellis', 'tmp');
    await mkdir(base, { recursive: true, mode: 0o700 });
    realBase = await realpath(base);
  } catch (error) {
    throw new ToolError(
      ERROR_CODES.TOOL_FAILED,
      `core-python could not create its temp folder under ${join(workspaceRoot, '.trellis', 'tmp')} (${(error as NodeJS.ErrnoException).code ?? String(error)}); ` +
        'it needs an existing, writable workspace folder.',
    );
  }
  if (!isPathInside(root, realBase)) {
    throw new ToolError(
      ERROR_CODES.PATH_NOT_ALLOWED,
      `${base} resolves to ${realBase}, outside the workspace ${root}; remove that symlink so core-python can make its temp folder inside the workspace.`,
    );
  }
  return mkdtemp(join(realBase, 'python-'));
}

function describeEnd(
  result: { exitCode: number | null; signal: string | null; timedOut: boolean; stdoutTruncated: boolean; stderrTruncated: boolean },
  settings: PythonSettings,
): string {
  const parts: string[] = [];
  if (result.timedOut) {
    parts.push(
      `Killed after ${settings.timeout_seconds} s ([runtime.tools.python] timeout_seconds); output so far is shown. Make the program faster or process less data per call.`,
    );
  } else if (result.signal !== null) {
    parts.push(
      `Ended by ${result.signal}` +
        (result.signal === 'SIGXCPU' || result.signal === 'SIGKILL'
          ? ` (likely the CPU-time or memory limit of ${settings.max_memory_mb} MiB); use less memory or time.`
          : '.'),
    );
  } else if (result.exitCode === 0) {
    parts.push('Exited with code 0.');
  } else {
    parts.push(`Exited with code ${result.exitCode}; see stderr for the traceback.`);
  }
  if (result.stdoutTruncated || result.stderrTruncated) {
    parts.push(
      `Output was cut at ${settings.max_output_bytes} bytes per stream ([runtime.tools.python] max_output_bytes); print less, e.g. a summary instead of whole data.`,
    );
  }
  return parts.join(' ');
}

/** `core-python.run`: runs a Python program in a fresh temp folder with a deadline, limits and an output cap. */
export const runTool = defineTool<PythonRunInput, PythonRunResult, PythonSettings>({
  name: 'run',
  description:
    'Run a Python 3 program and get its stdout, stderr and exit code. Use it for calculations, data processing and ' +
    'quick experiments that are easier in Python than by hand. Each call starts a fresh interpreter in an empty temp ' +
    'folder (its working directory, deleted afterwards), so nothing carries over between calls: read inputs from ' +
    'workspace files by path and print results. Limits: a wall-clock deadline (default 30 s), a memory limit ' +
    '(default 512 MiB per process), stdout and stderr each cut at a cap (default 64 KiB); child processes are ' +
    'killed when the program ends. There is NO network or filesystem isolation: the program runs as the host user.',
  input: PythonRunInputSchema,
  contract: {
    sideEffects: true,
    idempotent: false,
    capabilities: ['process.spawn'],
    sandbox: 'python-research',
    // The plugin's own timeout_seconds (at most 600) governs; this is only the runtime's backstop.
    deadlineMs: 605_000,
    maxRetries: 0,
  },
  tags: ['python', 'code', 'compute'],
  examples: [
    { description: 'Compute something', input: { code: 'import math\nprint(math.factorial(20))' } },
    {
      description: 'Process text given on stdin',
      input: { code: 'import sys\nprint(sum(int(x) for x in sys.stdin.read().split()))', stdin: '1 2 3' },
    },
  ],
  async canonicalize(input, ctx) {
    const interpreter = await resolveInterpreter({ interpreter: ctx.config.interpreter, path: ctx.env.PATH });
    return {
      input,
      summary: {
        interpreter,
        code_chars: input.code.length,
        stdin_chars: input.stdin?.length ?? 0,
        timeout_seconds: ctx.config.timeout_seconds,
        max_memory_mb: ctx.config.max_memory_mb,
      },
    };
  },
  async run(input, ctx) {
    const settings = ctx.config;
    const interpreter = await resolveInterpreter({ interpreter: settings.interpreter, path: ctx.env.PATH });
    const tempDir = await makeTempDir(ctx.workspace.root);
    try {
      const script = join(tempDir, 'main.py');
      await writeFile(script, input.code, { mode: 0o600 });
      const limited = canLimitResources();
      const cpuSeconds = Math.ceil(settings.timeout_seconds);
      const result = await runProcess({
        command: interpreter,
        // -E: ignore PYTHON* variables; -B: write no .pyc files.
        args: ['-E', '-B', script],
        cwd: tempDir,
        env: childEnv(ctx, tempDir),
        ...(input.stdin === undefined ? {} : { stdin: input.stdin }),
        timeoutMs: Math.round(settings.timeout_seconds * 1000),
        maxOutputBytes: settings.max_output_bytes,
        signal: ctx.signal,
        ...(limited ? { maxMemoryMb: settings.max_memory_mb, maxCpuSeconds: cpuSeconds } : {}),
      });
      if (result.spawnError !== undefined) {
        throw new ToolError(
          ERROR_CODES.TOOL_FAILED,
          `Could not start ${interpreter}: ${result.spawnError}. Check [runtime.tools.python] interpreter.`,
        );
      }
      if (result.aborted && !result.timedOut) {
        throw new ToolError(ERROR_CODES.ABORTED, 'The call was aborted before the Python program finished; its processes were killed.');
      }
      const ended = {
        exitCode: result.exitCode,
        signal: result.signal,
        timedOut: result.timedOut,
        stdoutTruncated: result.stdoutTruncated,
        stderrTruncated: result.stderrTruncated,
      };
      return {
        exit_code: result.exitCode,
        signal: result.signal,
        stdout: result.stdout,
        stderr: result.stderr,
        stdout_truncated: result.stdoutTruncated,
        stderr_truncated: result.stderrTruncated,
        timed_out: result.timedOut,
        duration_ms: Math.round(result.durationMs),
        limits: {
          timeout_seconds: settings.timeout_seconds,
          memory_mb: result.limits.memory ? settings.max_memory_mb : null,
          cpu_seconds: result.limits.cpu ? cpuSeconds : null,
        },
        summary: describeEnd(ended, settings),
      };
    } finally {
      await rm(tempDir, { recursive: true, force: true });
    }
  },
});
