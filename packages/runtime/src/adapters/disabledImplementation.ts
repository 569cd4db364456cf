import { failOutcome } from '@trellis/sdk';
import type { PluginImplementation } from '../PluginImplementation.ts';
import { notDispatched } from './notDispatched.ts';

/**
 * An implementation for a plugin that cannot run (no manifest, no runtime, an insecure endpoint,
 * a missing variable): it starts nothing, is `disabled`, and answers every call with the reason,
 * marked as never dispatched.
 */
export function disabledImplementation(pluginId: string, code: string, message: string): PluginImplementation {
  return {
    pluginId,
    start: async () => {},
    discoveredTools: () => undefined,
    call: async () => notDispatched(failOutcome(code, message)),
    state: () => 'disabled',
    lastError: () => message,
    dispose: async () => {},
  };
}
