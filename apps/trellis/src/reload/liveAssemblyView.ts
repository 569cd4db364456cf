import type { LifecycleTransition } from '@trellis/sdk';
import type { ToolRuntime } from '@trellis/runtime';
import type { Assembly } from '../assemble.ts';
import type { LiveHost } from './startLiveHost.ts';

/**
 * An `Assembly` whose every field reads the live host's current generation, so code written for
 * one assembly (the MCP server, the agent, `trellis plugins list`) follows reloads. Its runtime's
 * `invoke` goes through the host's request barrier; `dispose`/`close` close the whole host.
 */
export function liveAssemblyView(host: LiveHost, current: () => Assembly): Assembly {
  const runtime: ToolRuntime = {
    invoke: (request, options) => host.invoke(request, options),
    addHook: (hook) => host.addHook(hook),
    dispose: () => host.close(),
  };
  // Lifecycle listeners outlive generations: they follow whichever generation serves now.
  const lifecycleListeners = new Set<(transition: LifecycleTransition) => void>();
  let following: { readonly assembly: Assembly; readonly stop: () => void } | undefined;
  const follow = (): void => {
    const assembly = current();
    if (lifecycleListeners.size > 0 && following?.assembly === assembly) return;
    following?.stop();
    following =
      lifecycleListeners.size === 0
        ? undefined
        : {
            assembly,
            stop: assembly.onLifecycleChange((transition) => {
              for (const listener of [...lifecycleListeners]) listener(transition);
            }),
          };
  };
  host.onReload(() => follow());
  return {
    get config() {
      return current().config;
    },
    get configSource() {
      return current().configSource;
    },
    get configWarnings() {
      return current().configWarnings;
    },
    get configLayers() {
      return current().configLayers;
    },
    get workspaceTrust() {
      return current().workspaceTrust;
    },
    get workspace() {
      return current().workspace;
    },
    get env() {
      return current().env;
    },
    get snapshot() {
      return current().snapshot;
    },
    get registry() {
      return current().registry;
    },
    get catalog() {
      return current().catalog;
    },
    runtime,
    explain: (id) => current().explain(id),
    lifecycle: (id) => current().lifecycle(id),
    startPlugin: (id, signal) => current().startPlugin(id, signal),
    checkPluginHealth: (id, signal) => current().checkPluginHealth(id, signal),
    status: () => current().status(),
    onLifecycleChange(listener) {
      lifecycleListeners.add(listener);
      follow();
      return () => {
        lifecycleListeners.delete(listener);
        follow();
      };
    },
    onCatalogChanged: (listener) => host.onCatalogChanged(listener),
    dispose: () => host.close(),
    close: () => host.close(),
  };
}
