import { resolve } from 'node:path';
import type { ConfigLoadResult } from './ConfigProblem.ts';
import { findRuntimeConfig } from './findRuntimeConfig.ts';
import type { ConfigSource } from './findRuntimeConfig.ts';
import { loadConfigFile } from './loadRuntimeConfig.ts';
import { parseRuntimeConfig } from './parseRuntimeConfig.ts';

/** The file name used in messages about the embedded default config. */
export const EMBEDDED_CONFIG_NAME = '<embedded runtime.toml>';

/** Options for {@link resolveRuntimeConfig}. */
export interface ResolveRuntimeConfigOptions {
  /** The value of `--config`, if given. */
  readonly configPath?: string | undefined;
  /** Environment for `TRELLIS_CONFIG`, `XDG_CONFIG_HOME` and `${VAR}` expansion. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The workspace folder; also the base of relative paths in the embedded default. */
  readonly workspace: string;
  /** The user's home folder. */
  readonly home: string;
  /** Overrides `env.XDG_CONFIG_HOME`. */
  readonly xdgConfigHome?: string | undefined;
  /** What relative `--config` and `TRELLIS_CONFIG` paths resolve against. Default: `process.cwd()`. */
  readonly cwd?: string;
  /** The text of `config/runtime.toml`, embedded in the app at build time. */
  readonly embeddedDefault: string;
}

/** A loaded config and where it came from. */
export type ResolvedRuntimeConfig = ConfigLoadResult & { readonly source: ConfigSource; readonly path?: string };

const NOT_FOUND_HINTS: Partial<Record<ConfigSource, string>> = {
  flag: 'fix the path given to --config, or drop --config to use the normal lookup',
  env: 'fix TRELLIS_CONFIG, or unset it to use the normal lookup',
};

/**
 * Finds the config ({@link findRuntimeConfig}) and loads it. The embedded default is parsed
 * from `embeddedDefault` with the workspace as the base of relative paths; nothing is merged.
 */
export function resolveRuntimeConfig(options: ResolveRuntimeConfigOptions): ResolvedRuntimeConfig {
  const location = findRuntimeConfig({
    configFlag: options.configPath,
    env: options.env,
    workspace: options.workspace,
    xdgConfigHome: options.xdgConfigHome,
    home: options.home,
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
  });
  if (location.path === undefined) {
    const result = parseRuntimeConfig(options.embeddedDefault, {
      fileName: EMBEDDED_CONFIG_NAME,
      env: options.env,
      baseDir: resolve(options.cwd ?? process.cwd(), options.workspace),
    });
    return { ...result, source: location.source };
  }
  const hint = NOT_FOUND_HINTS[location.source];
  const result = loadConfigFile(location.path, { env: options.env, ...(hint === undefined ? {} : { notFoundHint: hint }) });
  return { ...result, source: location.source, path: location.path };
}
