import { execFileSync } from 'node:child_process';
import { testToolContext } from '@trellis/testing';
import type { ToolContext } from '@trellis/sdk';
import { PythonSettingsSchema } from '../src/PythonSettingsSchema.ts';
import type { PythonSettings } from '../src/PythonSettingsSchema.ts';

/**
 * The real interpreter behind `python3` (not a version-manager shim, which adds a slow bash start
 * and variables of its own), so deadline tests keep a wide margin on a loaded machine.
 */
export const REAL_PYTHON = execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim();

/**
 * A ToolContext as the runtime would build it, with settings parsed from a `[runtime.tools.python]`
 * patch; the interpreter defaults to REAL_PYTHON unless the patch names one.
 */
export function makeContext(options: {
  workspace: string;
  settings?: Record<string, unknown>;
  signal?: AbortSignal;
}): ToolContext<PythonSettings> {
  return testToolContext({
    config: PythonSettingsSchema.parse({ interpreter: REAL_PYTHON, ...options.settings }),
    tool: 'core-python.run',
    workspace: options.workspace,
    env: { PATH: process.env.PATH, HOME: process.env.HOME },
    ...(options.signal ? { signal: options.signal } : {}),
  });
}
