// The in-process host the benches drive: one bundled plugin, id `bench`, wired into a catalog and a
// ToolRuntime the way `assemble()` wires a bundled plugin, without config files or discovery.
import { createResourceCatalog, type ResourceCatalog } from '@trellis/catalog';
import { RuntimeConfigSchema } from '@trellis/config';
import { createBundledImplementation, createToolRuntime, type ExecutionHook, type ToolRuntime } from '@trellis/runtime';
import type { HostServices, PluginManifest } from '@trellis/sdk';
import type { BundledPluginDescriptor } from '@trellis/sdk/internal';
import { PluginManifestSchema } from '@trellis/sdk/schema';

/** The manifest of the benches' plugin. */
export const BENCH_MANIFEST: PluginManifest = PluginManifestSchema.parse({
  schema_version: 1,
  id: 'bench',
  name: 'Bench',
  version: '1.0.0',
  kind: 'toolset',
});

/** Host services that know of nothing: the benches' tools never ask. */
export const BENCH_HOST: HostServices = { plugins: () => [], explainPlugin: () => undefined, searchTools: () => [] };

/** A catalog and runtime over `descriptor` alone, with the default runtime config. */
export function benchRuntime(
  descriptor: BundledPluginDescriptor,
  hooks: readonly ExecutionHook[] = [],
): { readonly catalog: ResourceCatalog; readonly runtime: ToolRuntime } {
  const config = RuntimeConfigSchema.parse({});
  const catalog = createResourceCatalog({
    snapshot: { plugins: [{ id: 'bench', state: 'enabled', bundled: true, reasons: [], manifest: descriptor.manifest }] },
    bundled: [descriptor],
    config,
  });
  const impl = createBundledImplementation({ descriptor, settings: {}, workspace: { root: process.cwd() }, env: {}, host: BENCH_HOST });
  const runtime = createToolRuntime({ catalog, implementations: new Map([['bench', impl]]), config, hooks: [...hooks] });
  return { catalog, runtime };
}
