import { resolve } from 'node:path';
import type { ResolvedRuntimeConfig } from '@trellis/config';
import { findConfigLayers, resolveConfigHome, resolveWorkspaceTrust } from '@trellis/config/lookup';
import { loadOnce, type Pause } from '@trellis/sdk/internal';
import { EMBEDDED_RUNTIME_CONFIG, EMBEDDED_RUNTIME_TOML } from './bundled.gen.ts';

// The schema library (zod and the TOML parser with it), on first use: a start without a config
// file never loads it.
const loadConfigLibrary = loadOnce(() => import('@trellis/config'));

/**
 * The workspace (default: the current directory) and home (default: `$HOME`, else the OS's) a host
 * runs with. node:os is loaded only when `$HOME` is unset (loading it costs ms of every start).
 */
export function resolveHostPaths(options: {
  readonly workspace?: string | undefined;
  readonly home?: string | undefined;
  readonly env: Readonly<Record<string, string | undefined>>;
}): { workspace: string; home: string } {
  return {
    workspace: resolve(options.workspace ?? process.cwd()),
    home: options.home ?? options.env.HOME ?? process.getBuiltinModule('node:os').homedir(),
  };
}

/** Where to look for runtime.toml. */
export interface LoadConfigOptions {
  readonly configPath?: string | undefined;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly workspace: string;
  readonly home: string;
  /** Always run the full layered loader, so `origins` is filled (for `config show --origin`). */
  readonly withOrigins?: boolean;
  /** A live host's pacer: the load pauses between the phases of each layer (see `resolveRuntimeConfigInSteps`). */
  readonly pause?: Pause;
}

/**
 * Loads the layered config (embedded default ← user ← trusted workspace ← `--config` or
 * `TRELLIS_CONFIG`) and the workspace's trust. When no config file exists at all, the built-in
 * default is used in the form the build already parsed and validated, so the common case loads no
 * TOML parser and no schema library; a real file loads them on demand.
 */
export async function loadConfig(
  options: LoadConfigOptions,
): Promise<ResolvedRuntimeConfig & { workspaceTrust: NonNullable<ResolvedRuntimeConfig['workspaceTrust']> }> {
  const configHome = resolveConfigHome({ env: options.env, home: options.home });
  const workspaceTrust = resolveWorkspaceTrust({ workspace: options.workspace, configHome });
  const layers = findConfigLayers({ configFlag: options.configPath, env: options.env, workspace: options.workspace, home: options.home });
  if (layers.length === 0 && workspaceTrust.errors.length === 0 && options.withOrigins !== true) {
    return {
      value: structuredClone(EMBEDDED_RUNTIME_CONFIG),
      warnings: [],
      errors: [],
      source: 'embedded',
      layers: [{ source: 'embedded', applied: true, keys: [] }],
      workspaceTrust,
    };
  }
  const { resolveRuntimeConfig, resolveRuntimeConfigInSteps } = await loadConfigLibrary();
  const { pause, ...lookup } = options;
  const resolveOptions = { ...lookup, embeddedDefault: EMBEDDED_RUNTIME_TOML, workspaceTrust };
  const result = pause === undefined ? resolveRuntimeConfig(resolveOptions) : await resolveRuntimeConfigInSteps(resolveOptions, pause);
  return { ...result, workspaceTrust };
}
