import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, linkSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { stringify } from 'smol-toml';
import { afterEach } from 'vitest';
import { RuntimeConfigSchema } from '@trellis/config';
import type { RuntimeConfig } from '@trellis/config';
import { DEFAULT_TOOL_CONTRACT } from '@trellis/sdk';
import { PluginManifestSchema } from '@trellis/sdk/schema';
import type { PluginManifestInput, ToolSpec } from '@trellis/sdk';
import type { BundledPluginDescriptor } from '@trellis/sdk/internal';
import type { FileRootSpec, ProfilesData } from '../src/index.ts';

/** A node of a fixture tree: file text, or a special object. */
export type TreeNode =
  | string
  | { readonly symlink: string }
  | { readonly hardlink: string }
  | { readonly fifo: true }
  | { readonly dir: true }
  | { readonly bytes: Uint8Array }
  | { readonly text: string; readonly mode?: number; readonly uid?: number };

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Builds a tree in a fresh temp folder (removed after the test); returns its realpath. */
export function makeTree(spec: Record<string, TreeNode>): string {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'trellis-registry-')));
  made.push(base);
  for (const [rel, node] of Object.entries(spec)) {
    const path = join(base, rel);
    mkdirSync(dirname(path), { recursive: true });
    if (typeof node === 'string') writeFileSync(path, node);
    else if ('symlink' in node) symlinkSync(node.symlink, path);
    else if ('hardlink' in node) linkSync(join(base, node.hardlink), path);
    else if ('fifo' in node) execFileSync('mkfifo', [path]);
    else if ('dir' in node) mkdirSync(path, { recursive: true });
    else if ('bytes' in node) writeFileSync(path, node.bytes);
    else {
      writeFileSync(path, node.text);
      if (node.mode !== undefined) chmodSync(path, node.mode);
      if (node.uid !== undefined) chownSync(path, node.uid, node.uid);
    }
  }
  return base;
}

/** plugin.toml text for a manifest (schema_version, name, version and kind filled in). */
export function manifestText(fields: { readonly id: string } & Record<string, unknown>): string {
  return stringify({ schema_version: 1, name: fields.id, version: '1.0.0', kind: 'toolset', ...fields });
}

/** A process runtime inside the plugin folder. */
export const PROCESS_RUNTIME: Record<string, unknown> = { type: 'process', command: 'python3', args: ['main.py'] };

/** A tool declaration, so NO_TOOLS stays out of results that are not about it. */
export const ONE_TOOL = [{ name: 'run', description: 'Runs it' }];

/** A file root spec. */
export function fileRoot(path: string, root: FileRootSpec['root'] = 'explicit'): FileRootSpec {
  const priority = ({ explicit: 0, env: 1, workspace: 2, user: 3 } as const)[root];
  return { root, priority, path, origin: `test ${root} root`, warnIfMissing: root === 'explicit' || root === 'env' };
}

/** A parsed RuntimeConfig from a partial object. */
export function config(input: Record<string, unknown> = {}): RuntimeConfig {
  return RuntimeConfigSchema.parse(input);
}

/** The three standard profiles. */
export const PROFILES: ProfilesData = {
  minimal: { description: '', includes: [] },
  messaging: { description: '', includes: ['minimal'] },
  full: { description: '', includes: ['messaging'] },
};

/** A bundled descriptor with `tools` tool specs and optional settings. */
export function descriptor(
  fields: Partial<PluginManifestInput> & { id: string },
  options: { tools?: number; settings?: BundledPluginDescriptor['settings'] } = {},
): BundledPluginDescriptor {
  const manifest = PluginManifestSchema.parse({ schema_version: 1, name: fields.id, version: '0.1.0', kind: 'toolset', ...fields });
  const tools: ToolSpec[] = Array.from({ length: options.tools ?? 1 }, (_, i) => ({
    name: `t${i}`,
    description: 'a tool',
    inputSchema: { type: 'object' },
    tags: [],
    examples: [],
    contract: DEFAULT_TOOL_CONTRACT,
  }));
  return {
    packageName: `@trellis/plugin-${fields.id}`,
    manifest,
    tools,
    ...(options.settings ? { settings: options.settings } : {}),
    load: () => Promise.reject(new Error('not loaded in registry tests')),
  };
}

/** Replaces a temp base path with `<tmp>` in any JSON-able value. */
export function normalize<T>(value: T, base: string): T {
  return JSON.parse(JSON.stringify(value).split(base).join('<tmp>')) as T;
}
