import { lstatSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';

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
 * Finds the one config file to use; the first found wins and nothing is merged:
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
  const xdg = options.xdgConfigHome ?? options.env.XDG_CONFIG_HOME;
  const configHome = xdg !== undefined && xdg !== '' && isAbsolute(xdg) ? xdg : join(options.home, '.config');
  const inUserConfig = join(configHome, 'trellis', 'runtime.toml');
  if (somethingAt(inUserConfig)) return { source: 'user', path: resolve(inUserConfig) };
  return { source: 'embedded' };
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
