import { testToolContext } from '@trellis/testing';
import type { HostPluginView, HostServices, HostToolHit, ToolContext } from '@trellis/sdk';

/** A host with fixed plugins and hits, recording what the tools asked it. */
export interface FakeHost extends HostServices {
  readonly searches: Array<{ query: string; limit: number | undefined }>;
}

/** Builds host services from plain data, as the registry and catalog would answer. */
export function makeHost(
  options: {
    plugins?: readonly HostPluginView[];
    hits?: readonly HostToolHit[];
    explanations?: Readonly<Record<string, unknown>>;
  } = {},
): FakeHost {
  const searches: FakeHost['searches'] = [];
  return {
    searches,
    plugins: () => options.plugins ?? [],
    explainPlugin: (id) => options.explanations?.[id] ?? [],
    searchTools: (query, opts) => {
      searches.push({ query, limit: opts?.limit });
      return (options.hits ?? []).slice(0, opts?.limit ?? 10);
    },
  };
}

/** A ToolContext as the runtime builds one, for calling a tool's canonicalize/run directly. */
export function makeContext(options: { host?: HostServices; tool?: string; signal?: AbortSignal } = {}): ToolContext<unknown> {
  return testToolContext({
    config: {},
    tool: options.tool ?? 'builtin-tools.test',
    host: options.host ?? makeHost(),
    ...(options.signal ? { signal: options.signal } : {}),
  });
}
