import { realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { discoverCandidates } from '../src/index.ts';
import type { ExternalCandidateFacts } from '../src/index.ts';
import { fileRoot, makeTree, manifestText } from './helpers.ts';

type Node = string | { symlink: string } | { dir: true };

/** A small seeded PRNG (mulberry32), so a failing tree can be rebuilt from its seed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A random root: real folders up to three deep, folders that are links (to siblings, to an
 * ancestor, out of the root, nowhere), manifests that are files or links (to another manifest, to
 * a file outside, nowhere). Paths are relative to the tree's base; the root is `r`.
 */
function randomTree(seed: number): Record<string, Node> {
  const random = prng(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const folders = ['r/a', 'r/b', 'r/a/c', 'r/b/d', 'r/a/c/e', 'r/.h'];
  const tree: Record<string, Node> = {
    'outside/plugin.toml': manifestText({ id: 'outside' }),
    'outside/x/plugin.toml': manifestText({ id: 'outx' }),
  };
  for (const folder of folders) if (random() < 0.7) tree[`${folder}/keep`] = { dir: true };
  let n = 0;
  for (const folder of folders) {
    const roll = random();
    if (roll < 0.45) tree[`${folder}/plugin.toml`] = manifestText({ id: `p${(n += 1)}` });
    else if (roll < 0.6)
      tree[`${folder}/plugin.toml`] = {
        symlink: pick(['../../outside/plugin.toml', '../a/plugin.toml', 'missing.toml', '../b/plugin.toml']),
      };
  }
  for (let i = 0; i < 3; i += 1) {
    const at = `${pick(['r', 'r/a', 'r/b', 'r/a/c'])}/l${i}`;
    tree[at] = { symlink: pick(['../a', '../b', '.', '..', '../../outside', 'nowhere', 'c', '../b/d']) };
  }
  return tree;
}

const realOrNull = (path: string): string | null => {
  try {
    return realpathSync.native(path);
  } catch {
    return null;
  }
};

describe('the realpath of a found manifest', () => {
  it('is what realpath(3) says, whichever derivation found it, over 150 random trees of links', () => {
    const mismatches: string[] = [];
    let checked = 0;
    for (let seed = 1; seed <= 150; seed += 1) {
      const base = makeTree(randomTree(seed));
      const { candidates } = discoverCandidates({ roots: [fileRoot(join(base, 'r'))], bundled: [] });
      for (const c of candidates.filter((x): x is ExternalCandidateFacts => !x.bundled)) {
        checked += 1;
        const paths = [c.manifestPath, ...c.aliases];
        // Every path to the candidate leads to one real file (or, dangling, to none).
        for (const path of paths) {
          if (realOrNull(path) !== c.manifestReal)
            mismatches.push(`seed ${seed}: ${path} → ${realOrNull(path)}, candidate says ${c.manifestReal}`);
        }
        // The plugin folder is where the manifest really is (a manifest link out of the root is an escape).
        if (c.manifestReal !== null && c.pluginDirReal !== dirname(c.manifestReal)) {
          mismatches.push(`seed ${seed}: ${c.manifestPath}: plugin folder ${c.pluginDirReal}, manifest in ${dirname(c.manifestReal)}`);
        }
      }
    }
    expect(mismatches).toEqual([]);
    // The trees do exercise the derivation: many candidates, some through links, some dangling.
    expect(checked).toBeGreaterThan(300);
  });
});
