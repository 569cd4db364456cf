import { describe, expect, it } from 'vitest';
import type { CatalogPluginView, CatalogSnapshotView } from './CatalogSnapshotView.ts';
import { createCatalogBuildCache, createResourceCatalog, createResourceCatalogInSteps, type CatalogBuildCache } from './index.ts';
import type { ResourceCatalog, ToolDescriptor } from './index.ts';
import type { ToolOverrides } from './parseToolOverrides.ts';
import { BUNDLED, SNAPSHOT, config } from '../test/fixtures.ts';

const view = (catalog: ResourceCatalog) => ({
  descriptors: catalog.descriptors.map((d: ToolDescriptor) => ({ ...d, schemaHash: d.schemaHash })),
  availability: catalog.availability(),
  offered: catalog.offered().map((d) => d.name),
  warnings: catalog.warnings,
});

describe('CatalogBuildCache', () => {
  it('builds every catalog as a build without the cache would, through random changes', async () => {
    let seed = 11;
    const next = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return Math.floor(seed / 65536) % n;
    };
    const pick = <T>(options: readonly T[]): T => options[next(options.length)]!;
    const cache = createCatalogBuildCache();
    let reused = 0;
    const counting: CatalogBuildCache = {
      tool: (entry, spec, inputs, make) => {
        let fresh = false;
        const tool = cache.tool(entry, spec, inputs, () => ((fresh = true), make()));
        if (!fresh) reused += 1;
        return tool;
      },
      availability: (tool, inputs, decide) => cache.availability(tool, inputs, decide),
    };
    // Entries are kept (the same objects) unless a step replaces one, as a registry cache does.
    let plugins: CatalogPluginView[] = [...SNAPSHOT.plugins];
    let runtime: Record<string, unknown> = {};
    let overrides: ToolOverrides = {};
    for (let step = 0; step < 200; step += 1) {
      switch (next(7)) {
        case 0: {
          const at = next(plugins.length);
          const was = plugins[at]!;
          const state = pick(['enabled', 'disabled', 'unavailable'] as const);
          plugins = plugins.map((p, i) => (i === at ? { ...was, state, reasons: [{ code: 'X', message: `now ${state}` }] } : p));
          break;
        }
        case 1:
          runtime = { ...runtime, capabilities: pick([['*'], ['fs.read'], ['fs.read', 'vendor.secret'], []]) };
          break;
        case 2:
          runtime = { ...runtime, policy: { ...(runtime.policy as object), deny: pick([[], ['core-fs.*'], ['git-helper.commit']]) } };
          break;
        case 3:
          runtime = { ...runtime, policy: { ...(runtime.policy as object), ask: pick([[], ['core-fs.write'], ['*.lookup']]) } };
          break;
        case 4:
          runtime = { ...runtime, tool_timeout_seconds: pick([30, 60, 5]), max_retries: pick([0, 2]) };
          break;
        case 5:
          overrides = pick<ToolOverrides>([
            {},
            { 'git-helper.status': { description: 'Status, briefly.' } },
            { 'core-fs.read': { tags: ['files'] } },
          ]);
          break;
        default:
          runtime = { ...runtime, policy: { ...(runtime.policy as object), allow: pick([['*'], ['core-fs.*', 'builtin-tools.*'], []]) } };
      }
      const snapshot: CatalogSnapshotView = { plugins };
      const options = { snapshot, bundled: BUNDLED, overrides, config: config({ runtime }) };
      const fresh = createResourceCatalog(options);
      const kept = await createResourceCatalogInSteps({ ...options, buildCache: counting }, () => undefined);
      expect(view(kept), `step ${step}`).toEqual(view(fresh));
      expect(view(createResourceCatalog({ ...options, buildCache: counting })), `step ${step}`).toEqual(view(fresh));
    }
    expect(reused).toBeGreaterThan(1000);
  });

  it('keeps the descriptor of a tool whose entry and inputs did not change', () => {
    const cache = createCatalogBuildCache();
    const first = createResourceCatalog({ snapshot: SNAPSHOT, bundled: BUNDLED, config: config(), buildCache: cache });
    const second = createResourceCatalog({ snapshot: SNAPSHOT, bundled: BUNDLED, config: config(), buildCache: cache });
    expect(second.get('git-helper.status')).toBe(first.get('git-helper.status'));
    const longer = createResourceCatalog({
      snapshot: SNAPSHOT,
      bundled: BUNDLED,
      config: config({ runtime: { tool_timeout_seconds: 7 } }),
      buildCache: cache,
    });
    expect(longer.get('git-helper.status')).not.toBe(first.get('git-helper.status'));
    expect(longer.get('git-helper.status')?.contract.deadlineMs).toBe(7000);
  });
});
