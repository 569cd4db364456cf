import { isAbsolute, join, resolve } from 'node:path';
import type { RuntimeConfig } from '@trellis/config';
import type { BundledRootSpec, FileRootSpec, RootSpec } from './types.ts';

/** Inputs of {@link resolveDiscoveryRoots}. */
export interface ResolveDiscoveryRootsOptions {
  readonly config: RuntimeConfig;
  /** `--plugin-path` values, in the order given (root 0, after `[plugins] paths`). */
  readonly pluginPaths?: readonly string[];
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The workspace folder; root 2 is `<workspace>/.trellis/plugins`. */
  readonly workspace: string;
  /** The user's home folder, for `~/.config` and `~/` in config paths. */
  readonly home: string;
  /** Folder that relative `[plugins] paths` resolve against (the config file's folder); default `cwd`. */
  readonly baseDir?: string;
  /** Folder that relative `--plugin-path` and `TRELLIS_PLUGIN_PATH` entries resolve against; default `process.cwd()`. */
  readonly cwd?: string;
  /**
   * Whether the user trusts the workspace (`trellis trust`). When false, root 2 is marked
   * `untrustedWorkspace`: its plugins are listed as disabled (`WORKSPACE_UNTRUSTED`) and never
   * run. Default: true (a caller that does not track trust keeps today's behaviour).
   */
  readonly workspaceTrusted?: boolean;
  /** The workspace's real path, named in the `WORKSPACE_UNTRUSTED` message; default the resolved workspace. */
  readonly workspaceReal?: string;
}

/** The compiled-in root. */
export const BUNDLED_ROOT: BundledRootSpec = Object.freeze({
  root: 'bundled',
  priority: 4,
  path: null,
  origin: 'compiled into this build',
  warnIfMissing: false,
});

/**
 * Lists the discovery roots in priority order: explicit (`[plugins] paths`, then `--plugin-path`;
 * 0), env (`TRELLIS_PLUGIN_PATH`, `:`-separated; 1), workspace (`<workspace>/.trellis/plugins`; 2),
 * user (`$XDG_CONFIG_HOME/trellis/plugins`, else `~/.config/trellis/plugins`; 3), bundled (4).
 * Pure. A folder named twice is kept once, at its best priority. `~/` expands to `home`.
 */
export function resolveDiscoveryRoots(options: ResolveDiscoveryRootsOptions): RootSpec[] {
  const cwd = options.cwd ?? process.cwd();
  const baseDir = options.baseDir ?? cwd;
  const expand = (p: string, base: string): string =>
    p === '~' ? options.home : p.startsWith('~/') ? join(options.home, p.slice(2)) : resolve(base, p);

  const specs: FileRootSpec[] = [];
  for (const p of options.config.plugins.paths) {
    specs.push({ root: 'explicit', priority: 0, path: expand(p, baseDir), origin: `[plugins] paths entry "${p}"`, warnIfMissing: true });
  }
  for (const p of options.pluginPaths ?? []) {
    if (p === '') continue;
    specs.push({ root: 'explicit', priority: 0, path: expand(p, cwd), origin: `--plugin-path ${p}`, warnIfMissing: true });
  }
  for (const p of (options.env.TRELLIS_PLUGIN_PATH ?? '').split(':')) {
    if (p === '') continue;
    specs.push({ root: 'env', priority: 1, path: expand(p, cwd), origin: `TRELLIS_PLUGIN_PATH entry "${p}"`, warnIfMissing: true });
  }
  const workspace = resolve(cwd, options.workspace);
  specs.push({
    root: 'workspace',
    priority: 2,
    path: join(workspace, '.trellis', 'plugins'),
    origin: 'the workspace (<workspace>/.trellis/plugins)',
    warnIfMissing: false,
    ...(options.workspaceTrusted === false ? { untrustedWorkspace: options.workspaceReal ?? workspace } : {}),
  });
  const xdg = options.env.XDG_CONFIG_HOME;
  // The XDG spec says a relative XDG_CONFIG_HOME is invalid and must be ignored.
  const configHome = xdg !== undefined && xdg !== '' && isAbsolute(xdg) ? xdg : join(options.home, '.config');
  specs.push({
    root: 'user',
    priority: 3,
    path: join(configHome, 'trellis', 'plugins'),
    origin: xdg ? '$XDG_CONFIG_HOME/trellis/plugins' : '~/.config/trellis/plugins',
    warnIfMissing: false,
  });

  const seen = new Set<string>();
  const out: RootSpec[] = [];
  for (const spec of specs) {
    if (seen.has(spec.path)) continue;
    seen.add(spec.path);
    out.push(Object.freeze(spec));
  }
  out.push(BUNDLED_ROOT);
  return out;
}
