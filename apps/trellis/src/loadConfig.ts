import { resolve } from 'node:path';
import type { ResolvedRuntimeConfig } from '@trellis/config';
import { findRuntimeConfig } from '@trellis/config/lookup';
import { EMBEDDED_RUNTIME_CONFIG, EMBEDDED_RUNTIME_TOML } from './bundled.gen.ts';

/**
 * The workspace (default: the current directory) and home (default: `$HOME`, else the OS's) a host
 * runs with. node:os is loaded only when `$HOME` is unset (loading it costs ms of every start).
 */
export function resolveHostPaths(options: {
  readonly workspace?: string | undefined;
  readonly home?: string | undefined;
  readonly env: Readonly<Record<string, string | undefined>>;
}): { workspace: string; home: string } {
  return { workspace: resolve(options.workspace ?? process.cwd()), home: options.home ?? options.env.HOME ?? process.getBuiltinModule('node:os').homedir() };
}

/** Where to look for runtime.toml. */
export interface LoadConfigOptions {
  readonly configPath?: string | undefined;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly workspace: string;
  readonly home: string;
}

/**
 * Finds and loads runtime.toml in the documented order. When nothing is found, the built-in
 * default is used in the form the build already parsed and validated, so the common case loads
 * no TOML parser and no schema library; a real file loads them on demand.
 */
export async function loadConfig(options: LoadConfigOptions): Promise<ResolvedRuntimeConfig> {
  const location = findRuntimeConfig({ configFlag: options.configPath, env: options.env, workspace: options.workspace, home: options.home });
  if (location.source === 'embedded') {
    return { value: structuredClone(EMBEDDED_RUNTIME_CONFIG), warnings: [], errors: [], source: 'embedded' };
  }
  const { resolveRuntimeConfig } = await import('@trellis/config');
  return resolveRuntimeConfig({ ...options, embeddedDefault: EMBEDDED_RUNTIME_TOML });
}
