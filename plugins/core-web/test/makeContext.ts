import { silentLogger } from '@trellis/sdk';
import type { ToolContext } from '@trellis/sdk';
import { WebSettingsSchema } from '../src/WebSettingsSchema.ts';
import type { WebSettings } from '../src/WebSettingsSchema.ts';

/** A ToolContext as the runtime would build it, with settings parsed from a `[runtime.tools.web]` patch. */
export function makeContext(options: { settings?: Record<string, unknown>; signal?: AbortSignal } = {}): ToolContext<WebSettings> {
  return {
    signal: options.signal ?? new AbortController().signal,
    logger: silentLogger,
    config: WebSettingsSchema.parse(options.settings ?? {}),
    workspace: { root: process.cwd() },
    env: {},
    callId: 'test-call',
    tool: 'core-web.fetch',
    host: {
      plugins: () => [],
      explainPlugin: () => null,
      searchTools: () => [],
    },
  };
}
