import { definePlugin } from '@trellis/sdk';
import { listSkillsTool } from './listSkillsTool.ts';
import { readSkillTool } from './readSkillTool.ts';
import { runSkillTool } from './runSkillTool.ts';
import { SkillsSettingsSchema, type SkillsSettings } from './SkillsSettingsSchema.ts';

/** The skill-source-local plugin: `list`, `read` and `run` over SKILL.md skills in the skill roots. */
export const plugin = definePlugin<SkillsSettings>({
  manifest: { id: 'skill-source-local' },
  settings: { key: 'skills', schema: SkillsSettingsSchema },
  tools: [listSkillsTool, readSkillTool, runSkillTool],
});

export { SkillsSettingsSchema, MAX_RUN_SKILL_TIMEOUT_SECONDS } from './SkillsSettingsSchema.ts';
export type { SkillsSettings } from './SkillsSettingsSchema.ts';
export { resolveSkillRoots } from './resolveSkillRoots.ts';
export type { SkillRoot, SkillRootSource, ResolveSkillRootsOptions } from './resolveSkillRoots.ts';
export { discoverSkills } from './discoverSkills.ts';
export type { SkillCandidate, SkillLibrary, SkillScript, DiscoverSkillsOptions } from './discoverSkills.ts';
export { parseSkillMarkdown, SkillFrontMatterSchema, SKILL_NAME_PATTERN } from './parseSkillMarkdown.ts';
export type { ParsedSkillMarkdown, ParseSkillMarkdownResult, DeclaredScript } from './parseSkillMarkdown.ts';
export { folderProblems, fileProblems, MAX_SKILL_FILE_BYTES } from './skillAdmission.ts';
export type { PathFacts } from './skillAdmission.ts';
export type { Reason } from './Reason.ts';
export type { ListSkillsResult } from './listSkillsTool.ts';
export type { ReadAdmittedSkill, ReadRejectedSkill, OtherSkillCandidate } from './readSkillTool.ts';
