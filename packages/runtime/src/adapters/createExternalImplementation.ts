import { silentLogger } from '@trellis/sdk';
import { pickHostEnv, resolveHostEnvGrant } from '@trellis/sdk/internal';
import { existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import type { Logger, PluginManifest } from '@trellis/sdk';
import type { PluginImplementation } from '../PluginImplementation.ts';
import { createHttpImplementation } from './createHttpImplementation.ts';
import { createProcessImplementation } from './createProcessImplementation.ts';
import { createScriptImplementation } from './createScriptImplementation.ts';
import { disabledImplementation } from './disabledImplementation.ts';
import { resolveWorkingFolder } from './resolveWorkingFolder.ts';

/** The part of a registry snapshot entry an external implementation needs. */
export interface ExternalPluginEntry {
  readonly id: string;
  readonly manifest: PluginManifest | null;
  /** Realpath of the plugin folder. */
  readonly pluginDir: string | null;
}

/** `[plugins.entries.<id>]` as the adapters use it: the plugin's config and overrides of its `[runtime]`. */
export interface ExternalPluginOverrides {
  readonly config?: Readonly<Record<string, unknown>>;
  readonly restart_on_crash?: boolean;
  readonly max_restarts?: number;
  readonly restart_delay_seconds?: number;
  readonly health_check_interval_seconds?: number;
  readonly timeout_seconds?: number;
  /** Host variables the user grants this plugin (only those its manifest declares reach it). */
  readonly pass_env?: readonly string[];
  readonly handshake_timeout_seconds?: number;
  readonly health_check_timeout_seconds?: number;
}

/** How to build an external implementation. */
export interface ExternalImplementationOptions {
  readonly overrides?: ExternalPluginOverrides;
  /** The host environment (allow-listed variables, `${VAR}` expansion). Default: none. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly logger?: Logger;
  /** The host's workspace, for `[runtime] cwd = "${WORKSPACE}…"`. */
  readonly workspace?: string;
}

/** Relative args that name something in the plugin folder, made absolute (options and other words stay). */
function anchorArgs(args: readonly string[], pluginDir: string): string[] {
  return args.map((arg) =>
    arg.startsWith('-') || isAbsolute(arg) || !existsSync(resolve(pluginDir, arg)) ? arg : resolve(pluginDir, arg),
  );
}

/** Drops undefined values so they do not overwrite manifest settings. */
function defined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * Builds the out-of-process implementation of an admitted external plugin from its manifest's
 * `[runtime]` (process, script or http), with `[plugins.entries.<id>]` overrides applied. Never
 * throws: a plugin that cannot run (no manifest, no `[runtime]`, no folder, insecure endpoint)
 * gets an implementation in state `disabled` whose calls fail with the reason.
 */
export function createExternalImplementation(
  entry: ExternalPluginEntry,
  options: ExternalImplementationOptions = {},
): PluginImplementation {
  const { id, manifest, pluginDir } = entry;
  const logger = options.logger ?? silentLogger;
  const overrides = options.overrides ?? {};
  const env = options.env ?? {};
  const config = overrides.config ?? {};
  if (!manifest)
    return disabledImplementation(id, 'MANIFEST_INVALID', `plugin ${id} has no valid plugin.toml; run \`trellis plugins explain ${id}\``);
  const runtime = manifest.runtime;
  if (!runtime) {
    return disabledImplementation(
      id,
      'NO_IMPLEMENTATION',
      `plugin ${id} has no [runtime] table in plugin.toml; add one with type = "process", "script" or "http"`,
    );
  }
  // Which host variables reach the plugin is the user's decision: only declared and granted ones.
  const grant = resolveHostEnvGrant({ pluginId: id, manifest, passEnv: overrides.pass_env ?? [] });
  if (grant.problems.length > 0) return disabledImplementation(id, 'ENV_NOT_GRANTED', grant.problems.join('; '));
  const grantedEnv = pickHostEnv(env, [...grant.always, ...grant.granted]);
  const common = { pluginId: id, manifest, config, env: grantedEnv, logger };
  // A granted variable reaches the child under its own name (an entry of [runtime.env] wins).
  const passThrough = Object.fromEntries(grant.granted.filter((name) => env[name] !== undefined).map((name) => [name, `\${${name}}`]));
  switch (runtime.type) {
    case 'process':
    case 'script': {
      if (!pluginDir)
        return disabledImplementation(id, 'PLUGIN_LOAD_FAILED', `plugin ${id} has no plugin folder to run ${runtime.command} in`);
      const working = resolveWorkingFolder({ pluginId: id, pluginDir, cwd: runtime.cwd, workspace: options.workspace });
      if (!working.ok) return disabledImplementation(id, working.code, working.message);
      const workingDir = working.path;
      // Relative args name files of the plugin (admission checked them there): keep that meaning in another folder.
      const args = workingDir === pluginDir ? runtime.args : anchorArgs(runtime.args, pluginDir);
      if (runtime.type === 'process') {
        const merged = {
          ...runtime,
          env: { ...passThrough, ...runtime.env },
          args,
          ...defined({
            restart_on_crash: overrides.restart_on_crash,
            max_restarts: overrides.max_restarts,
            restart_delay_seconds: overrides.restart_delay_seconds,
            health_check_interval_seconds: overrides.health_check_interval_seconds,
            timeout_seconds: overrides.timeout_seconds,
            handshake_timeout_seconds: overrides.handshake_timeout_seconds,
            health_check_timeout_seconds: overrides.health_check_timeout_seconds,
          }),
        };
        return createProcessImplementation({ ...common, pluginDir, workingDir, runtime: merged });
      }
      return createScriptImplementation({
        ...common,
        pluginDir,
        workingDir,
        runtime: { ...runtime, env: { ...passThrough, ...runtime.env }, args, ...defined({ timeout_seconds: overrides.timeout_seconds }) },
      });
    }
    case 'http':
      return createHttpImplementation({
        ...common,
        runtime: { ...runtime, ...defined({ timeout_seconds: overrides.timeout_seconds }) },
        ...(overrides.health_check_interval_seconds === undefined
          ? {}
          : { healthCheckIntervalSeconds: overrides.health_check_interval_seconds }),
        ...(overrides.max_restarts === undefined ? {} : { maxRestarts: overrides.max_restarts }),
        ...(overrides.restart_delay_seconds === undefined ? {} : { restartDelaySeconds: overrides.restart_delay_seconds }),
      });
  }
}
