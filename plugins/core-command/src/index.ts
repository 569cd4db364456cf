import { definePlugin } from '@trellis/sdk';
import { CommandSettingsSchema } from './CommandSettingsSchema.ts';
import type { CommandSettings } from './CommandSettingsSchema.ts';
import { runTool } from './runTool.ts';

/** The core-command plugin: run an allow-listed program without a shell. */
export const plugin = definePlugin<CommandSettings>({
  manifest: { id: 'core-command' },
  settings: { key: 'command', schema: CommandSettingsSchema },
  tools: [runTool],
});

export { CommandSettingsSchema, DEFAULT_ENV_ALLOW } from './CommandSettingsSchema.ts';
export type { CommandSettings } from './CommandSettingsSchema.ts';
export { runTool, RunInputSchema, MAX_ARGS } from './runTool.ts';
export type { RunOutput } from './runTool.ts';
export { resolveProgram } from './resolveProgram.ts';
export type { ResolvedProgram } from './resolveProgram.ts';
export { matchesGlob } from './matchesGlob.ts';
export { reduceEnv } from './reduceEnv.ts';
export { checkArguments, argumentMatches, effectiveRules } from './checkArguments.ts';
export { ProgramRulesSchema } from './ProgramRulesSchema.ts';
export type { ProgramRulesInput } from './ProgramRulesSchema.ts';
export { SHIPPED_PROGRAM_RULES } from './shippedProgramRules.ts';
export type { ProgramRules, ShippedProgramRules } from './shippedProgramRules.ts';
