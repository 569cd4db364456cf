import { resolve } from 'node:path';
import { ERROR_CODES } from '@trellis/sdk';
import { runSteps, runStepsPausing, type Pause, type Steps } from '@trellis/sdk/internal';
import { makeProblem } from './ConfigProblem.ts';
import type { ConfigLoadResult, ConfigProblem } from './ConfigProblem.ts';
import { resolveConfigHome } from './configHome.ts';
import { findConfigLayers } from './findRuntimeConfig.ts';
import type { ConfigSource } from './findRuntimeConfig.ts';
import { mergeConfigLayers } from './mergeConfigLayers.ts';
import { parseConfigLayerSteps } from './parseRuntimeConfig.ts';
import { readConfigFile } from './readConfigFile.ts';
import { RuntimeConfigSchema } from './RuntimeConfigSchema.ts';
import { resolveWorkspaceTrust } from './trustStore.ts';
import type { WorkspaceTrust } from './trustStore.ts';

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
  /**
   * Whether the workspace is trusted. Default: looked up in the user's trust store
   * (`$XDG_CONFIG_HOME/trellis/trusted-workspaces.json`, written by `trellis trust`).
   */
  readonly workspaceTrust?: WorkspaceTrust | undefined;
  /** The uid files must belong to (or root); default `process.getuid()`. */
  readonly uid?: number;
}

/** One layer as loaded: where it is, whether it applies, and the keys it sets. */
export interface ConfigLayerReport {
  readonly source: ConfigSource;
  /** Absolute path; absent for the embedded default. */
  readonly path?: string;
  /** False when the layer was left out: an untrusted workspace's file, or a file with errors. */
  readonly applied: boolean;
  /** Why it was left out (`WORKSPACE_UNTRUSTED`, or the code of its first error). */
  readonly reason?: { readonly code: string; readonly message: string };
  /** Dotted key paths this file sets (for a left-out workspace file: what it would set). */
  readonly keys: readonly string[];
}

/** Where one effective key came from. */
export interface ConfigOrigin {
  readonly source: ConfigSource;
  /** Absent for the embedded default. */
  readonly path?: string;
  /** True when the value came from a `${VAR}`: never print it. */
  readonly fromEnv: boolean;
}

/** A loaded, layered config and where each part came from. */
export type ResolvedRuntimeConfig = ConfigLoadResult & {
  /** The top layer that applied (the one whose keys win), `embedded` when no file did. */
  readonly source: ConfigSource;
  readonly path?: string;
  /** Every layer, lowest first, the embedded default included. */
  readonly layers?: readonly ConfigLayerReport[];
  /** Dotted key path → the layer that set it; a key no file set comes from the schema default. */
  readonly origins?: ReadonlyMap<string, ConfigOrigin>;
  /** The workspace and whether it is trusted. */
  readonly workspaceTrust?: WorkspaceTrust;
};

const NOT_FOUND_HINTS: Partial<Record<ConfigSource, string>> = {
  flag: 'fix the path given to --config, or drop --config to use the normal lookup',
  env: 'fix TRELLIS_CONFIG, or unset it to use the normal lookup',
};

/**
 * Loads the config as layers, each a patch over the one below: the embedded default ← the user
 * file ← the workspace file (only when the workspace is trusted) ← `--config` or `TRELLIS_CONFIG`.
 * Every file is admitted like a plugin manifest first (`CONFIG_UNSAFE`). An untrusted workspace's
 * file is not applied and its `${VAR}` references are never expanded; it is parsed only to report
 * the keys it would set. Errors in any applied layer fail the whole load (nothing half-applied).
 */
export function resolveRuntimeConfig(options: ResolveRuntimeConfigOptions): ResolvedRuntimeConfig {
  return runSteps(resolveRuntimeConfigSteps(options));
}

/**
 * {@link resolveRuntimeConfig} for a host that loads its config while it serves calls (a live
 * host's reload): it asks `pause()` between the phases of each layer (TOML, keys, schema) and
 * before the merged config is validated, so a large config (an `allow` list of 1,000 ids) is not
 * one block on the event loop. The same result.
 */
export function resolveRuntimeConfigInSteps(options: ResolveRuntimeConfigOptions, pause: Pause): Promise<ResolvedRuntimeConfig> {
  return runStepsPausing(resolveRuntimeConfigSteps(options), pause);
}

function* resolveRuntimeConfigSteps(options: ResolveRuntimeConfigOptions): Steps<ResolvedRuntimeConfig> {
  const cwd = options.cwd ?? process.cwd();
  const workspace = resolve(cwd, options.workspace);
  const configHome = resolveConfigHome(options);
  const locations = findConfigLayers({
    configFlag: options.configPath,
    env: options.env,
    workspace,
    xdgConfigHome: options.xdgConfigHome,
    home: options.home,
    cwd,
  });
  const uid = options.uid;
  const trust = options.workspaceTrust ?? resolveWorkspaceTrust({ workspace, configHome, ...(uid === undefined ? {} : { uid }) });

  const errors: ConfigProblem[] = [...trust.errors];
  const warnings: ConfigProblem[] = [];
  const layers: ConfigLayerReport[] = [];
  const applied: Array<{ tree: Record<string, unknown>; origin: string; expandedKeys: ReadonlySet<string> }> = [];
  const byOrigin = new Map<string, { source: ConfigSource; path?: string; expandedKeys: ReadonlySet<string> }>();

  const embedded = yield* parseConfigLayerSteps(options.embeddedDefault, {
    fileName: EMBEDDED_CONFIG_NAME,
    env: options.env,
    baseDir: workspace,
  });
  errors.push(...embedded.errors);
  warnings.push(...embedded.warnings);
  layers.push({ source: 'embedded', applied: embedded.tree !== undefined, keys: embedded.tree === undefined ? [] : keysOf(embedded.tree) });
  if (embedded.tree !== undefined) {
    applied.push({ tree: embedded.tree, origin: 'embedded', expandedKeys: embedded.expandedKeys });
    byOrigin.set('embedded', { source: 'embedded', expandedKeys: embedded.expandedKeys });
  }

  let top: { source: ConfigSource; path?: string } = { source: 'embedded' };
  for (const location of locations) {
    const untrusted = location.source === 'workspace' && !trust.trusted;
    const hint = NOT_FOUND_HINTS[location.source];
    const read = readConfigFile(location.path, { notFoundHint: hint, ...(uid === undefined ? {} : { uid }) });
    if (read.problem !== undefined) {
      // An untrusted workspace's file is never applied, so its problems cannot stop the host; they are still reported.
      if (untrusted) warnings.push(read.problem);
      else {
        errors.push(read.problem);
        top = { source: location.source, path: location.path };
      }
      layers.push({
        source: location.source,
        path: location.path,
        applied: false,
        reason: { code: read.problem.code, message: read.problem.message },
        keys: [],
      });
      continue;
    }
    const layer = yield* parseConfigLayerSteps(read.bytes, { fileName: location.path, env: options.env, expand: !untrusted });
    if (untrusted) {
      const keys = layer.tree === undefined ? [] : keysOf(layer.tree);
      const message = makeProblem({
        code: ERROR_CODES.WORKSPACE_UNTRUSTED,
        file: location.path,
        text: `not applied: the workspace ${trust.real} is not trusted, so its config is ignored${keys.length > 0 ? ` (${keys.length} key${keys.length === 1 ? '' : 's'}: ${listSome(keys)})` : ''}. If you trust this folder, run \`trellis trust ${quoteArg(trust.real)}\``,
      });
      warnings.push(message);
      layers.push({
        source: location.source,
        path: location.path,
        applied: false,
        reason: { code: message.code, message: message.message },
        keys,
      });
      continue;
    }
    errors.push(...layer.errors);
    warnings.push(...layer.warnings);
    if (layer.tree === undefined) {
      top = { source: location.source, path: location.path };
      const first = layer.errors[0];
      layers.push({
        source: location.source,
        path: location.path,
        applied: false,
        ...(first ? { reason: { code: first.code, message: first.message } } : {}),
        keys: [],
      });
      continue;
    }
    layers.push({ source: location.source, path: location.path, applied: true, keys: keysOf(layer.tree) });
    applied.push({ tree: layer.tree, origin: location.path, expandedKeys: layer.expandedKeys });
    byOrigin.set(location.path, { source: location.source, path: location.path, expandedKeys: layer.expandedKeys });
    top = { source: location.source, path: location.path };
  }

  const base = { source: top.source, ...(top.path !== undefined ? { path: top.path } : {}), layers, workspaceTrust: trust };
  if (errors.length > 0) return { value: undefined, warnings, errors, ...base };
  const merged = mergeConfigLayers(applied);
  yield;
  const parsed = RuntimeConfigSchema.safeParse(merged.tree);
  if (!parsed.success) {
    // Each layer passed on its own, so this is a bug in merging; say so rather than guess.
    const problem = makeProblem({
      code: ERROR_CODES.INTERNAL_ERROR,
      file: top.path ?? EMBEDDED_CONFIG_NAME,
      text: `the merged config layers do not validate (${parsed.error.issues[0]?.message ?? 'unknown'}); please report this with your config files`,
    });
    return { value: undefined, warnings, errors: [problem], ...base };
  }
  const origins = new Map<string, ConfigOrigin>();
  for (const [key, origin] of merged.origins) {
    const layer = byOrigin.get(origin);
    if (layer === undefined) continue;
    const fromEnv = [...layer.expandedKeys].some((k) => k === key || k.startsWith(`${key}[`) || k.startsWith(`${key}.`));
    origins.set(key, { source: layer.source, ...(layer.path !== undefined ? { path: layer.path } : {}), fromEnv });
  }
  return { value: parsed.data, warnings, errors: [], ...base, origins };
}

function keysOf(tree: Readonly<Record<string, unknown>>): string[] {
  return [...mergeConfigLayers([{ tree, origin: '' }]).origins.keys()];
}

function listSome(items: readonly string[]): string {
  return items.length > 5 ? `${items.slice(0, 5).join(', ')} and ${items.length - 5} more` : items.join(', ');
}

/** A path as a shell argument: bare when it is plain, single-quoted otherwise. */
export function quoteArg(value: string): string {
  return /^[A-Za-z0-9_./@%+=:,-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}
