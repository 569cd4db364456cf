import type { RuntimeConfig } from '@trellis/config';
import { isCandidateUnchanged, prepareRegistry, resolvePluginSettings, type SnapshotEntry } from '@trellis/registry';
import type { LifecycleState } from '@trellis/runtime';
import { samePlainData } from '@trellis/sdk/internal';
import type { Assembly } from '../assemble.ts';
import { fingerprintPlugin } from './fingerprintPlugin.ts';

/** The serving generation, as a reload's early start reads it. */
export interface ServingGeneration {
  readonly assembly: Assembly;
  readonly fingerprints: ReadonlyMap<string, string>;
}

/** Inputs of {@link planEarlyStarts}. */
export interface EarlyStartOptions {
  readonly serving: ServingGeneration;
  /** The next generation's config, just loaded. */
  readonly config: RuntimeConfig;
  readonly trusted: boolean;
  readonly refreshToolSources: boolean;
}

/**
 * A reload that changes a running out-of-process plugin's `[plugins.entries.<id>]` (its config,
 * grants, restart or timeout settings) must start a new child for it, and the reload serves only
 * once that child answers. That start (a process's boot and handshake) takes as long as building
 * the whole next generation, so it begins here, as soon as the new config is read, with the
 * fingerprint the plugin will have if its manifest and folder did not change too; the two then
 * run side by side. The generation takes the child over when the fingerprint it computes agrees;
 * otherwise the live host stops it unused (`dropUnclaimed`).
 *
 * Only the clear cases start early: the plugin's enabled candidate is running and requires no
 * program on PATH; the same edit changes neither the workspace's trust, nor `[plugins]`
 * allow/deny/profile/paths, nor the entry's `enabled`, so its decision stands; its folder and
 * manifest are as admission last judged them (`isCandidateUnchanged`); and its new settings
 * validate. Anything else waits for the build, as before.
 * Returns each plugin to start early, with the fingerprint to start it under (the pool's `prestart`).
 */
export async function planEarlyStarts(
  options: EarlyStartOptions,
): Promise<Array<{ readonly entry: SnapshotEntry; readonly fingerprint: string }>> {
  const { serving, config } = options;
  const before = serving.assembly.config;
  if (options.trusted !== serving.assembly.workspaceTrust.trusted) return [];
  const { allow, deny, profile, paths } = config.plugins;
  const policy = [before.plugins.allow, before.plugins.deny, before.plugins.profile, before.plugins.paths];
  if (!samePlainData([allow, deny, profile, paths], policy)) return [];

  // The enabled entry of each id only: the snapshot also lists the copies it shadowed, rejected
  // or left disabled (an untrusted workspace's), and none of those may run.
  const changed = serving.assembly.snapshot.plugins.filter((entry) => {
    const { id, manifest } = entry;
    const type = manifest?.runtime?.type;
    if (entry.state !== 'enabled' || entry.bundled || (type !== 'process' && type !== 'http')) return false;
    // A required program is looked up on PATH by the build; the early start does not repeat that.
    if ((manifest?.requires_commands.length ?? 0) > 0) return false;
    if (!serving.fingerprints.has(id) || !isRunning(serving.assembly.lifecycle(id)?.state)) return false;
    const next = config.plugins.entries[id];
    const previous = before.plugins.entries[id];
    if (next?.enabled !== previous?.enabled || samePlainData(next ?? null, previous ?? null)) return false;
    // The same edit may have touched the plugin's folder too (a pull, a chmod): start early only
    // what admission would judge as it did (the same manifest bytes, modes and owners up to the root).
    const facts = serving.assembly.registry.trace.find((d) => d.state === 'enabled' && d.admitted.id === id)?.admitted.facts;
    return facts !== undefined && !facts.bundled && isCandidateUnchanged(facts);
  });
  if (changed.length === 0) return [];
  // Settings are checked against the manifest's config_schema: the validator must be loaded.
  await prepareRegistry();
  const starts: Array<{ entry: SnapshotEntry; fingerprint: string }> = [];
  for (const entry of changed) {
    const settings = resolvePluginSettings({ id: entry.id, manifest: entry.manifest, config });
    if (settings.value === null) continue;
    const predicted = fingerprintPlugin({
      entry,
      settings: settings.value,
      overrides: config.plugins.entries[entry.id],
      trusted: options.trusted,
      refreshToolSources: options.refreshToolSources,
    });
    if (predicted !== serving.fingerprints.get(entry.id)) starts.push({ entry, fingerprint: predicted });
  }
  return starts;
}

/** Whether an implementation is serving or on its way to. */
export function isRunning(state: LifecycleState | undefined): boolean {
  return state === 'active' || state === 'initializing' || state === 'recovering';
}
