import { isToolError, silentLogger, type HostServices, type ToolContext } from '@trellis/sdk';

/** Host services that know no plugins and find no tools. */
export const NO_HOST: HostServices = { plugins: () => [], explainPlugin: () => null, searchTools: () => [] };

/**
 * A ToolContext as the runtime builds one, for calling a tool's `canonicalize`/`run` directly:
 * a fresh signal, a silent logger, no host services and an empty environment unless given.
 */
export function testToolContext<Settings>(options: {
  readonly config: Settings;
  readonly tool: string;
  readonly workspace?: string;
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly signal?: AbortSignal;
  readonly host?: HostServices;
}): ToolContext<Settings> {
  return {
    signal: options.signal ?? new AbortController().signal,
    logger: silentLogger,
    config: options.config,
    workspace: { root: options.workspace ?? process.cwd() },
    env: options.env ?? {},
    callId: 'test-call',
    tool: options.tool,
    host: options.host ?? NO_HOST,
  };
}

/** Awaits a call that must fail with a ToolError; returns its code and (normalized) message. */
export async function toolErrorOf(
  call: () => unknown,
  normalize: (text: string) => string = (t) => t,
): Promise<{ code: string; message: string }> {
  try {
    await call();
  } catch (error) {
    if (isToolError(error)) return { code: error.code, message: normalize(error.message) };
    throw error;
  }
  throw new Error('expected a ToolError, but the call succeeded');
}
