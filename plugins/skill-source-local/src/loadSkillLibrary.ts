import { ERROR_CODES, ToolError } from '@trellis/sdk';
import { formatIssues, issueToString } from '@trellis/sdk/internal';
import type { ToolContext } from '@trellis/sdk';
import { discoverSkills, type SkillCandidate, type SkillLibrary } from './discoverSkills.ts';
import { resolveSkillRoots } from './resolveSkillRoots.ts';
import { SkillsSettingsSchema, type SkillsSettings } from './SkillsSettingsSchema.ts';

/** The plugin's settings from the context, checked again so a tool never runs on malformed settings. */
export function resolveSkillsSettings(config: unknown): SkillsSettings {
  const parsed = SkillsSettingsSchema.safeParse(config ?? {});
  if (!parsed.success) {
    const lines = formatIssues(parsed.error, ['runtime', 'tools', 'skills']).map(issueToString);
    throw new ToolError(ERROR_CODES.CONFIG_INVALID, `[runtime.tools.skills] is invalid; fix runtime.toml:\n${lines.join('\n')}`);
  }
  return parsed.data;
}

/** Discovers the skills for one call. Skill roots are read on every call, so new or edited skills show up at once. */
export async function loadSkillLibrary(
  ctx: ToolContext<unknown>,
): Promise<{ settings: SkillsSettings; library: SkillLibrary; trustWorkspace: boolean }> {
  const settings = resolveSkillsSettings(ctx.config);
  const roots = resolveSkillRoots({ workspace: ctx.workspace.root, env: ctx.env, paths: settings.paths });
  // The workspace skill root is trusted to run in process only when the user trusted the workspace
  // (`trellis trust`); a host that does not say counts as untrusted.
  const trustWorkspace = ctx.workspace.trusted === true;
  const library = await discoverSkills({ roots, interpreters: settings.interpreters, inProcess: settings.in_process, trustWorkspace });
  return { settings, library, trustWorkspace };
}

/** Every candidate with this name: the admitted one first, then rejected and shadowed ones. */
export function candidatesNamed(library: SkillLibrary, name: string): SkillCandidate[] {
  return [...library.skills.filter((s) => s.name === name), ...library.others.filter((s) => s.name === name)];
}
