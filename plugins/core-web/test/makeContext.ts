import { testToolContext } from '@trellis/testing';
import type { ToolContext } from '@trellis/sdk';
import { WebSettingsSchema } from '../src/WebSettingsSchema.ts';
import type { WebSettings } from '../src/WebSettingsSchema.ts';

/** A ToolContext as the runtime would build it, with settings parsed from a `[runtime.tools.web]` patch. */
export function makeContext(options: { settings?: Record<string, unknown>; signal?: AbortSignal } = {}): ToolContext<WebSettings> {
  return testToolContext({
    config: WebSettingsSchema.parse(options.settings ?? {}),
    tool: 'core-web.fetch',
    ...(options.signal ? { signal: options.signal } : {}),
  });
}
