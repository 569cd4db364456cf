import { basename } from 'node:path';
import { z } from 'zod';
import { ERROR_CODES, ToolError, defineTool } from '@trellis/sdk';
import { runProcess } from '@trellis/sdk/internal';
import type { ToolContext } from '@trellis/sdk';
import { checkArguments } from './checkArguments.ts';
import type { CommandSettings } from './CommandSettingsSchema.ts';
import { reduceEnv } from './reduceEnv.ts';
import { resolveProgram } from './resolveProgram.ts';
import { resolveWorkingFolder } from './resolveWorkingFolder.ts';

/** Most arguments one call may pass. */
export const MAX_ARGS = 1000;

/** Input of `core-command.run`. */
export const RunInputSchema = z
  .object({
    program: z
      .string()
      .min(1)
      .max(4096)
      .describe(
        'The program to run: a bare name looked up on PATH (e.g. "git"), or a path. It must be on the operator\'s allow list. Not a shell command line: no pipes, redirects, globs or variables.',
      ),
    args: z
      .array(z.string().max(128 * 1024))
      .max(MAX_ARGS)
      .default([])
      .describe(
        'Arguments, one string each, passed to the program exactly as given: no shell runs, so quotes, $, ;, |, * and backticks reach the program literally. Default: none.',
      ),
    cwd: z
      .string()
      .min(1)
      .max(4096)
      .optional()
      .describe('Working folder, relative to the workspace and inside it. Default: [runtime.tools.command] cwd (the workspace root).'),
  })
  .strict();

/** Output of `core-command.run`. */
export interface RunOutput {
  /** The absolute path that ran (resolved through PATH once). */
  readonly resolvedProgram: string;
  readonly argv: readonly string[];
  readonly cwd: string;
  /** Exit code, or null when a signal ended it (e.g. at the deadline). */
  readonly exitCode: number | null;
  readonly signal: string | null;
  /** True when the deadline passed and the process group was killed. */
  readonly timedOut: boolean;
  readonly stdout: string;
  readonly stderr: string;
  readonly stdoutTruncated: boolean;
  readonly stderrTruncated: boolean;
  readonly durationMs: number;
}

interface Prepared {
  readonly cwd: string;
  readonly env: Record<string, string>;
  readonly program: { path: string; realPath: string };
}

async function prepare(input: z.infer<typeof RunInputSchema>, ctx: ToolContext<CommandSettings>): Promise<Prepared> {
  for (const [index, arg] of input.args.entries()) {
    if (arg.includes('\0')) {
      throw new ToolError(
        ERROR_CODES.INVALID_ARGUMENT,
        `args[${index}]: contains a NUL byte, which no program argument can hold. Remove it.`,
      );
    }
  }
  const baseCwd = await resolveWorkingFolder({
    workspace: ctx.workspace.root,
    value: ctx.config.cwd,
    label: '[runtime.tools.command] cwd',
  });
  const cwd =
    input.cwd === undefined ? baseCwd : await resolveWorkingFolder({ workspace: ctx.workspace.root, value: input.cwd, label: 'cwd' });
  const env = reduceEnv(ctx.env, ctx.config.env_allow);
  const program = await resolveProgram({ program: input.program, allow: ctx.config.allow, pathVariable: env.PATH, cwd });
  const names = [basename(input.program), basename(program.path), basename(program.realPath)];
  await checkArguments({ names, args: input.args, programs: ctx.config.programs, cwd, workspace: ctx.workspace.root });
  return { cwd, env, program };
}

function withMarker(text: string, truncated: boolean, stream: string, limit: number): string {
  if (!truncated) return text;
  return `${text}\n[core-command: ${stream} truncated at ${limit} bytes ([runtime.tools.command] max_output_bytes); the rest was dropped]`;
}

/** `core-command.run`: one allow-listed program, no shell, under a deadline and an output cap. */
export const runTool = defineTool<z.infer<typeof RunInputSchema>, RunOutput, CommandSettings>({
  name: 'run',
  description:
    "Runs one allow-listed program with arguments, without a shell, in a folder inside the workspace, and returns its exit code, stdout, stderr and duration. Arguments reach the program literally (no pipes, redirects, globs or $variables). Only a few environment variables are passed. Output is capped (default 64 KiB per stream, marked when truncated) and at the deadline (default 30 s) the program and all its children are killed. A non-zero exit code is a normal result, not an error. If a program is refused, it is not on the operator's allow list.",
  input: RunInputSchema,
  // The runtime's cap (tool_timeout_seconds, default 120 s) bounds this; timeout_seconds normally fires first.
  contract: { sideEffects: true, capabilities: ['process.spawn'], idempotent: false, deadlineMs: 120_000 },
  tags: ['command', 'process', 'shell-free'],
  examples: [
    { description: 'Show the git status', input: { program: 'git', args: ['status', '--short'] } },
    { description: 'List a folder in long form', input: { program: 'ls', args: ['-la', 'src'] } },
  ],
  async canonicalize(input, ctx) {
    const prepared = await prepare(input, ctx);
    return {
      input: { ...input, cwd: prepared.cwd },
      summary: {
        argv: [prepared.program.path, ...input.args],
        realProgram: prepared.program.realPath,
        cwd: prepared.cwd,
        env: Object.keys(prepared.env).sort(),
      },
    };
  },
  async run(input, ctx) {
    const { cwd, env, program } = await prepare(input, ctx);
    const limit = ctx.config.max_output_bytes;
    const result = await runProcess({
      command: program.path,
      args: input.args,
      cwd,
      env,
      timeoutMs: Math.round(ctx.config.timeout_seconds * 1000),
      maxOutputBytes: limit,
      signal: ctx.signal,
    });
    if (result.spawnError !== undefined) {
      const code =
        result.spawnError === 'EACCES'
          ? ERROR_CODES.NOT_ALLOWED
          : result.spawnError === 'ENOENT'
            ? ERROR_CODES.NOT_FOUND
            : ERROR_CODES.TOOL_FAILED;
      throw new ToolError(code, `program: "${input.program}" (${program.path}) could not be started: ${result.spawnError}.`);
    }
    return {
      resolvedProgram: program.path,
      argv: [program.path, ...input.args],
      cwd,
      exitCode: result.exitCode,
      signal: result.signal,
      timedOut: result.timedOut,
      stdout: withMarker(result.stdout, result.stdoutTruncated, 'stdout', limit),
      stderr: withMarker(result.stderr, result.stderrTruncated, 'stderr', limit),
      stdoutTruncated: result.stdoutTruncated,
      stderrTruncated: result.stderrTruncated,
      durationMs: Math.round(result.durationMs),
    };
  },
});
