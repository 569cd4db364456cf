import { definePlugin } from '@trellis/sdk';
import { PythonSettingsSchema } from './PythonSettingsSchema.ts';
import type { PythonSettings } from './PythonSettingsSchema.ts';
import { runTool } from './runTool.ts';

/** The core-python plugin: `core-python.run`. Opt-in (`[plugins] allow = ["core-python"]`). */
export const plugin = definePlugin<PythonSettings>({
  manifest: { id: 'core-python' },
  settings: { key: 'python', schema: PythonSettingsSchema },
  tools: [runTool],
});

export { PythonSettingsSchema, runTool };
export { PythonRunInputSchema } from './runTool.ts';
export type { PythonSettings };
export type { PythonRunInput, PythonRunResult } from './runTool.ts';
