import { defineTool, ERROR_CODES, ToolError } from '@trellis/sdk';
import { z } from 'zod';
import { isTrustedInProcess, type SkillCandidate, type SkillLibrary } from './discoverSkills.ts';
import { listSkillFiles } from './listSkillFiles.ts';
import { candidatesNamed, loadSkillLibrary } from './loadSkillLibrary.ts';
import { nearestNames } from './nearestNames.ts';
import type { Reason } from './Reason.ts';
import { WORKER_EXTENSIONS } from './resolveInterpreter.ts';
import type { SkillsSettings } from './SkillsSettingsSchema.ts';

/** Another candidate with the same name (shadowed by the winner, or rejected). */
export interface OtherSkillCandidate {
  readonly state: 'rejected' | 'shadowed';
  readonly source: string;
  readonly dir: string;
  readonly reasons: readonly Reason[];
}

/** What `read` returns for an admitted skill. */
export interface ReadAdmittedSkill {
  readonly name: string;
  readonly state: 'admitted';
  readonly description: string;
  readonly source: string;
  readonly dir: string;
  /** The Markdown after the front matter: the instructions. */
  readonly body: string;
  /** Files of the skill folder, relative, capped. */
  readonly files: readonly string[];
  readonly filesTruncated: boolean;
  readonly scripts: ReadonlyArray<{ readonly name: string; readonly path: string; readonly runs: 'subprocess' | 'worker' }>;
  readonly input_schema: Readonly<Record<string, unknown>> | null;
  readonly warnings: readonly Reason[];
  readonly others: readonly OtherSkillCandidate[];
}

/** What `read` returns for a skill that was found but refused. */
export interface ReadRejectedSkill {
  readonly name: string;
  readonly state: 'rejected';
  readonly source: string;
  readonly dir: string;
  readonly reasons: readonly Reason[];
  readonly warnings: readonly Reason[];
  readonly others: readonly OtherSkillCandidate[];
}

/** Whether a script of `skill` runs in a worker thread: a trusted in_process skill (by location) and a JavaScript file. */
export function runsInWorker(
  skill: Pick<SkillCandidate, 'name' | 'source'>,
  scriptPath: string,
  settings: SkillsSettings,
  trustWorkspace: boolean,
): boolean {
  return (
    isTrustedInProcess(skill, settings.in_process, trustWorkspace) &&
    WORKER_EXTENSIONS.some((ext) => scriptPath.toLowerCase().endsWith(ext))
  );
}

/** The `NOT_FOUND` error for an unknown name, with the nearest names. */
export function unknownSkillError(name: string, library: SkillLibrary): ToolError {
  const all = [...library.skills, ...library.others].map((c) => c.name);
  if (all.length === 0) {
    return new ToolError(
      ERROR_CODES.NOT_FOUND,
      `no skill named ${JSON.stringify(name)}: no skills are installed. A skill is a folder with a SKILL.md in <workspace>/.trellis/skills or ~/.config/trellis/skills`,
    );
  }
  const near = nearestNames(name, all);
  const suggestion = near.length === 0 ? '' : ` Did you mean ${near.map((n) => JSON.stringify(n)).join(' or ')}?`;
  return new ToolError(
    ERROR_CODES.NOT_FOUND,
    `no skill named ${JSON.stringify(name)}.${suggestion} Call skill-source-local.list to see every skill.`,
  );
}

/** `skill-source-local.read { name }`: a skill's instructions, files, scripts and input schema, or why it was rejected. */
export const readSkillTool = defineTool({
  name: 'read',
  description:
    'Read one local skill: its instructions (Markdown), the files in its folder, its scripts and the input schema `skill-source-local.run` expects. For a rejected skill, the reasons. Use a name from `skill-source-local.list`.',
  input: z.object({ name: z.string().min(1).max(128).describe('The skill name, as listed.') }).strict(),
  contract: { capabilities: ['fs.read'], deadlineMs: 10_000 },
  tags: ['skills'],
  examples: [{ description: 'Read the instructions of a skill', input: { name: 'pdf-report' } }],
  async run(input, ctx): Promise<ReadAdmittedSkill | ReadRejectedSkill> {
    const { settings, library, trustWorkspace } = await loadSkillLibrary(ctx);
    const [first, ...rest] = candidatesNamed(library, input.name);
    if (first === undefined) throw unknownSkillError(input.name, library);
    const others = rest.map(toOther);
    if (first.state !== 'admitted') {
      return {
        name: first.name,
        state: 'rejected',
        source: first.source,
        dir: first.dir,
        reasons: first.reasons,
        warnings: first.warnings,
        others,
      };
    }
    const listing = await listSkillFiles(first.realDir!);
    return {
      name: first.name,
      state: 'admitted',
      description: first.description ?? '',
      source: first.source,
      dir: first.dir,
      body: first.body ?? '',
      files: listing.files,
      filesTruncated: listing.truncated,
      scripts: first.scripts.map((s) => ({
        name: s.name,
        path: s.path,
        runs: runsInWorker(first, s.realPath, settings, trustWorkspace) ? 'worker' : 'subprocess',
      })),
      input_schema: first.inputSchema,
      warnings: first.warnings,
      others,
    };
  },
});

function toOther(c: SkillCandidate): OtherSkillCandidate {
  return { state: c.state === 'shadowed' ? 'shadowed' : 'rejected', source: c.source, dir: c.dir, reasons: c.reasons };
}
