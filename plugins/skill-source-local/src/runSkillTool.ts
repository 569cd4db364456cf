import { defineTool, ERROR_CODES, ToolError } from '@trellis/sdk';
import { z } from 'zod';
import { candidatesNamed, loadSkillLibrary } from './loadSkillLibrary.ts';
import { runsInWorker, unknownSkillError } from './readSkillTool.ts';
import { buildSkillEnv, runSkillProcess, type SkillRunRequest } from './runSkillProcess.ts';
import { runSkillInWorker } from './runSkillInWorker.ts';
import { MAX_RUN_SKILL_TIMEOUT_SECONDS } from './SkillsSettingsSchema.ts';

/** `skill-source-local.run { name, script?, input }`: runs one script of a skill with `input` as JSON on stdin. */
export const runSkillTool = defineTool({
  name: 'run',
  description:
    "Run a script of a local skill. `input` is passed to the script as JSON (it must match the skill's input schema, see `skill-source-local.read`); the script's JSON output is returned as the value, plain text as `{ message }`. `script` picks one when the skill has several (default: the first listed). Runs under a deadline (run_skill_timeout).",
  input: z
    .object({
      name: z.string().min(1).max(128).describe('The skill name, as listed.'),
      script: z.string().min(1).max(256).optional().describe('Which script, by the name `read` shows; default the first.'),
      input: z.unknown().optional().describe("The script's input; must match the skill's input_schema. Default {}."),
    })
    .strict(),
  contract: {
    sideEffects: true,
    idempotent: false,
    capabilities: ['fs.read', 'process.spawn'],
    // The skill's own deadline is run_skill_timeout; the runtime's must not cut it short.
    deadlineMs: (MAX_RUN_SKILL_TIMEOUT_SECONDS + 5) * 1000,
  },
  tags: ['skills'],
  examples: [{ description: 'Run a skill with an input', input: { name: 'word-count', input: { text: 'one two three' } } }],
  async run(args, ctx): Promise<unknown> {
    const { settings, library, trustWorkspace } = await loadSkillLibrary(ctx);
    const [skill] = candidatesNamed(library, args.name);
    if (skill === undefined) throw unknownSkillError(args.name, library);
    if (skill.state !== 'admitted') {
      const headline = skill.reasons[0];
      throw new ToolError(
        headline?.code ?? ERROR_CODES.NOT_ALLOWED,
        `skill ${JSON.stringify(skill.name)} was rejected and cannot run: ${headline?.message ?? 'unknown reason'}. Call skill-source-local.read for every reason.`,
      );
    }
    if (skill.scripts.length === 0) {
      throw new ToolError(
        ERROR_CODES.INVALID_ARGUMENT,
        `skill ${JSON.stringify(skill.name)} has no scripts: it is instructions only. Call skill-source-local.read and follow its instructions instead.`,
      );
    }
    const script = args.script === undefined ? skill.scripts[0]! : skill.scripts.find((s) => s.name === args.script);
    if (script === undefined) {
      throw new ToolError(
        ERROR_CODES.NOT_FOUND,
        `skill ${JSON.stringify(skill.name)} has no script ${JSON.stringify(args.script)}; its scripts are ${skill.scripts.map((s) => JSON.stringify(s.name)).join(', ')}`,
      );
    }
    const input = args.input === undefined ? {} : args.input;
    if (skill.validator) {
      const problems = skill.validator.validate(input);
      if (problems.length > 0) {
        throw new ToolError(
          ERROR_CODES.INPUT_INVALID,
          `input for skill ${JSON.stringify(skill.name)} does not match its input_schema (see skill-source-local.read):\n${problems.join('\n')}`,
        );
      }
    }
    const request: SkillRunRequest = {
      skill: skill.name,
      script,
      cwd: skill.realDir!,
      input,
      timeoutMs: settings.run_skill_timeout * 1000,
      maxOutputBytes: settings.max_output_bytes,
      env: buildSkillEnv({
        hostEnv: ctx.env,
        passEnv: settings.pass_env,
        skill: skill.name,
        skillDir: skill.realDir!,
        workspace: ctx.workspace.root,
      }),
      signal: ctx.signal,
    };
    const inWorker = runsInWorker(skill, script.realPath, settings, trustWorkspace);
    ctx.logger.debug('skill run', { skill: skill.name, script: script.name, worker: inWorker });
    if (inWorker) {
      return runSkillInWorker(request, { maxMemoryMb: settings.worker_max_memory_mb });
    }
    return runSkillProcess(request, settings.max_memory_mb === undefined ? {} : { maxMemoryMb: settings.max_memory_mb });
  },
});
