import { silentLogger } from '@trellis/sdk';
import type { ToolContext } from '@trellis/sdk';
import { PythonSettingsSchema } from '../src/PythonSettingsSchema.ts';
import type { PythonSettings } from '../src/PythonSettingsSchema.ts';

/** A ToolContext as the runtime would build it, with settings parsed from a `[runtime.tools.python]` patch. */
export function makeContext(options: { workspace: string; settings?: Record<string, unknown>; signal?: AbortSignal }): ToolContext<PythonSettings> {
  return {
    signal: options.signal ?? new AbortController().signal,
    logger: silentLogger,
    config: PythonSettingsSchema.parse(options.settings ?? {}),
    workspace: { root: options.workspace },
    env: { PATH: process.env.PATH, HOME: process.env.HOME },
    callId: 'test-call',
    tool: 'core-python.run',
    host: {
      plugins: () => [],
      explainPlugin: () => null,
      searchTools: () => [],
    },
  };
}
