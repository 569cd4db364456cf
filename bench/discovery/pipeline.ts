// The inputs and the measured call of bench/discovery, shared by run.ts and the child process
// that measures the pipeline's own peak RSS (rssChild.ts).
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'smol-toml';
import { RuntimeConfigSchema } from '@trellis/config';
import { BUNDLED_ROOT, buildPluginRegistrySnapshot } from '@trellis/registry';
import { parseProfiles } from '@trellis/registry/parse';
import type { FileRootSpec, RootSpec } from '@trellis/registry';
import { PluginManifestSchema } from '@trellis/sdk/schema';
import type { BundledPluginDescriptor } from '@trellis/sdk/internal';

export const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

function bundledDescriptors(): BundledPluginDescriptor[] {
  const dir = join(repo, 'plugins');
  return readdirSync(dir)
    .filter((name) => {
      try {
        return lstatSync(join(dir, name, 'plugin.toml')).isFile();
      } catch {
        return false;
      }
    })
    .sort()
    .map((name) => ({
      packageName: `@trellis/plugin-${name}`,
      manifest: PluginManifestSchema.parse(parse(readFileSync(join(dir, name, 'plugin.toml'), 'utf8'))),
      tools: [],
      load: () => Promise.reject(new Error('not loaded in the bench')),
    }));
}

const config = RuntimeConfigSchema.parse({});
const profiles = parseProfiles(readFileSync(join(repo, 'config', 'profiles.toml'), 'utf8')).value;
const bundled = bundledDescriptors();
const env = { PATH: process.env.PATH ?? '' };

/**
 * The measured call: discover → admit → decide → snapshot over `roots` plus the bundled plugins;
 * returns the entry count. It reads `snapshot.hash`, which the registry computes on first read, so
 * the content hash is part of every measured run.
 */
export function full(roots: readonly FileRootSpec[]): number {
  const allRoots: RootSpec[] = [...roots, BUNDLED_ROOT];
  const { snapshot } = buildPluginRegistrySnapshot({ config, roots: allRoots, bundled, profiles, env });
  if (!/^[0-9a-f]{64}$/.test(snapshot.hash)) throw new Error(`snapshot hash is not a sha256: ${snapshot.hash}`);
  return snapshot.plugins.length;
}
