import { defineTool } from '@trellis/sdk';
import { z } from 'zod';
import { loadSkillLibrary } from './loadSkillLibrary.ts';
import type { Reason } from './Reason.ts';

/** What `list` returns: one line per skill, kept small because it goes into the prompt. */
export interface ListSkillsResult {
  readonly skills: ReadonlyArray<{ readonly name: string; readonly description: string }>;
  /** Skill folders that were found but refused (unsafe or malformed). */
  readonly rejected: number;
  /** Each refused skill folder with its first reason, so one bad skill is visible next to the good ones. */
  readonly refused?: ReadonlyArray<{ readonly name: string; readonly code: string; readonly message: string }>;
  /** Present when something was rejected or a root is misconfigured: what to call for details. */
  readonly hint?: string;
  readonly warnings?: readonly Reason[];
}

/** `skill-source-local.list {}`: every admitted skill's name and description. */
export const listSkillsTool = defineTool({
  name: 'list',
  description:
    'List the local skills (reusable instructions, some with scripts): name and one-line description each. Call `skill-source-local.read` with a name for the full instructions before using a skill.',
  input: z.object({}).strict(),
  contract: { capabilities: ['fs.read'], deadlineMs: 10_000 },
  tags: ['skills'],
  examples: [{ description: 'See which skills exist', input: {} }],
  async run(_input, ctx): Promise<ListSkillsResult> {
    const { library } = await loadSkillLibrary(ctx);
    const rejected = library.others.filter((c) => c.state === 'rejected');
    const names = [...new Set(rejected.map((c) => c.name))];
    return {
      skills: library.skills.map((s) => ({ name: s.name, description: s.description ?? '' })),
      rejected: rejected.length,
      ...(rejected.length === 0
        ? {}
        : {
            refused: rejected.map((c) => ({
              name: c.name,
              code: c.reasons[0]?.code ?? 'MANIFEST_INVALID',
              message: c.reasons[0]?.message ?? 'refused',
            })),
            hint: `${rejected.length} skill folder${rejected.length === 1 ? ' was' : 's were'} rejected (${names.join(', ')}); call skill-source-local.read with the name to see why`,
          }),
      ...(library.warnings.length === 0 ? {} : { warnings: library.warnings }),
    };
  },
});
