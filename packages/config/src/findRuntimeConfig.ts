import { lstatSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { resolveConfigHome } from './configHome.ts';

/** Where the config in use came from. */
export type ConfigSource = 'flag' | 'env' | 'workspace' | 'user' | 'embedded';

/** The outcome of the lookup: a source and, unless embedded, an absolute path. */
export interface ConfigLocation {
  readonly source: ConfigSource;
  readonly path?: string;
}

/** Options for {@link findRuntimeConfig}. */
export interface FindRuntimeConfigOptions {
  /** The value of `--config`, if given. */
  readonly configFlag?: string | undefined;
  /** Read for `TRELLIS_CONFIG` and `XDG_CONFIG_HOME`. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The workspace folder (`--workspace`, default the current directory). */
  readonly workspace: string;
  /** Overrides `env.XDG_CONFIG_HOME`. */
  readonly xdgConfigHome?: string | undefined;
  /** The user's home folder, for `~/.config` when `XDG_CONFIG_HOME` is unset. */
  readonly home: string;
  /** What relative `--config` and `TRELLIS_CONFIG` paths resolve against. Default: `process.cwd()`. */
  readonly cwd?: string;
}

/**
 * The top config layer: the file whose keys win over every other (see {@link findConfigLayers}
 * for all of them, which is what the loader merges):
 * 1. `--config FILE`; 2. `TRELLIS_CONFIG`; 3. `<workspace>/.trellis/runtime.toml`;
 * 4. `$XDG_CONFIG_HOME/trellis/runtime.toml` (an unset, empty or relative `XDG_CONFIG_HOME`
 * means `~/.config`); 5. the embedded default. A flag or `TRELLIS_CONFIG` is chosen whether or
 * not its file exists, so that loading it reports CONFIG_NOT_FOUND instead of silently falling
 * through. Steps 3 and 4 count as found when anything is at that path (even a directory or a
 * dangling symlink: loading it then says what is wrong). Reads no file; only `lstat`s two paths.
 */
export function findRuntimeConfig(options: FindRuntimeConfigOptions): ConfigLocation {
  const cwd = options.cwd ?? process.cwd();
  if (options.configFlag !== undefined) return { source: 'flag', path: absolute(cwd, options.configFlag) };
  const fromEnv = options.env.TRELLIS_CONFIG;
  if (fromEnv !== undefined && fromEnv !== '') return { source: 'env', path: absolute(cwd, fromEnv) };
  const inWorkspace = join(resolve(cwd, options.workspace), '.trellis', 'runtime.toml');
  if (somethingAt(inWorkspace)) return { source: 'workspace', path: inWorkspace };
  const inUserConfig = join(resolveConfigHome(options), 'runtime.toml');
  if (somethingAt(inUserConfig)) return { source: 'user', path: resolve(inUserConfig) };
  return { source: 'embedded' };
}

/** One config file that takes part in the layers. */
export interface ConfigLayerLocation {
  readonly source: Exclude<ConfigSource, 'embedded'>;
  /** Absolute path (not resolved through symlinks). */
  readonly path: string;
}

/**
 * The config files that take part, bottom layer first (the embedded default, always the lowest
 * layer, is not listed): the user file (`$XDG_CONFIG_HOME/trellis/runtime.toml`, else
 * `~/.config/trellis/runtime.toml`), the workspace file (`<workspace>/.trellis/runtime.toml`), then
 * `--config` or else `TRELLIS_CONFIG`. The user and workspace files count when anything is at their
 * path (loading then says what is wrong); `--config` and `TRELLIS_CONFIG` count whether or not their
 * file exists, so a wrong path is CONFIG_NOT_FOUND, never silently skipped. The workspace file is
 * listed whether or not the workspace is trusted; the loader decides whether it applies. Reads no
 * file; only `lstat`s two paths.
 */
export function findConfigLayers(options: FindRuntimeConfigOptions): ConfigLayerLocation[] {
  const cwd = options.cwd ?? process.cwd();
  const out: ConfigLayerLocation[] = [];
  const inUserConfig = resolve(resolveConfigHome(options), 'runtime.toml');
  if (somethingAt(inUserConfig)) out.push({ source: 'user', path: inUserConfig });
  const inWorkspace = join(resolve(cwd, options.workspace), '.trellis', 'runtime.toml');
  if (inWorkspace !== inUserConfig && somethingAt(inWorkspace)) out.push({ source: 'workspace', path: inWorkspace });
  if (options.configFlag !== undefined) out.push({ source: 'flag', path: absolute(cwd, options.configFlag) });
  else {
    const fromEnv = options.env.TRELLIS_CONFIG;
    if (fromEnv !== undefined && fromEnv !== '') out.push({ source: 'env', path: absolute(cwd, fromEnv) });
  }
  return out;
}

function absolute(cwd: string, path: string): string {
  return path === '' ? '' : resolve(cwd, path);
}

function somethingAt(path: string): boolean {
  try {
    return lstatSync(path, { throwIfNoEntry: false }) !== undefined;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    // ENOTDIR: a part of the path is a file, so nothing is there. Anything else (EACCES): let the load say it.
    return code !== 'ENOTDIR';
  }
}
