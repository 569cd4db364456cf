import type { PluginManifest } from './manifest.ts';

/**
 * Host variables every out-of-process child gets when they are set: what programs need to run at
 * all, and nothing that is usually a secret. Everything else reaches a plugin only by a grant.
 */
export const SAFE_CHILD_ENV = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR'] as const;

const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** Every `${VAR}` a manifest's `[runtime]` expands, with the key that uses it (`runtime.env.TOKEN`, `runtime.headers.Authorization`). */
export function findEnvReferences(runtime: PluginManifest['runtime'] | undefined): Array<{ readonly key: string; readonly name: string }> {
  if (!runtime) return [];
  const found: Array<{ key: string; name: string }> = [];
  const scan = (table: Readonly<Record<string, string>>, prefix: string) => {
    for (const [key, value] of Object.entries(table)) {
      for (const match of value.matchAll(REFERENCE)) found.push({ key: `${prefix}.${key}`, name: match[1]! });
    }
  };
  if (runtime.type === 'http') scan(runtime.headers, 'runtime.headers');
  else scan(runtime.env, 'runtime.env');
  return found;
}

/** One host variable a plugin declares, and whether the user's config grants it. */
export interface HostEnvVariable {
  readonly name: string;
  readonly declaredIn: 'requires_env' | 'env_from_host';
  readonly granted: boolean;
}

/** What a plugin receives from the host environment, as the user's config decides it. */
export interface HostEnvGrant {
  /** Always passed when set (`SAFE_CHILD_ENV`). */
  readonly always: readonly string[];
  /** Every variable the manifest declares, granted or not. */
  readonly declared: readonly HostEnvVariable[];
  /** Declared and granted: exactly what reaches the plugin from the host besides `always`. */
  readonly granted: readonly string[];
  /** Names in `pass_env` the manifest never declared: not passed. */
  readonly ignored: readonly string[];
  /** Problems that keep the plugin from starting (an expansion of an ungranted or undeclared variable, a required one not granted). */
  readonly problems: readonly string[];
}

/**
 * Decides which host variables a plugin receives: those it declares (`requires_env`,
 * `env_from_host`) that the user grants with `[plugins.entries.<id>] pass_env`. A `${VAR}` in
 * `[runtime]` that is not declared, or not granted, is a problem naming the plugin, the key and
 * the config line that would grant it.
 */
export function resolveHostEnvGrant(options: { pluginId: string; manifest: PluginManifest; passEnv: readonly string[] }): HostEnvGrant {
  const { pluginId, manifest } = options;
  const pass = new Set(options.passEnv);
  const declared: HostEnvVariable[] = [];
  const seen = new Set<string>();
  for (const [list, names] of [
    ['requires_env', manifest.requires_env],
    ['env_from_host', manifest.env_from_host ?? []],
  ] as const) {
    for (const name of names) {
      if (seen.has(name)) continue;
      seen.add(name);
      declared.push({ name, declaredIn: list, granted: pass.has(name) });
    }
  }
  const granted = declared.filter((v) => v.granted).map((v) => v.name);
  const grantLine = (names: readonly string[]) =>
    `[plugins.entries.${pluginId}] pass_env = ${JSON.stringify([...new Set([...options.passEnv, ...names])])}`;
  const problems: string[] = [];
  if (manifest.runtime) {
    const missingRequired = declared.filter((v) => v.declaredIn === 'requires_env' && !v.granted).map((v) => v.name);
    if (missingRequired.length > 0) {
      problems.push(
        `plugin ${pluginId} requires ${missingRequired.join(', ')} from the host (requires_env), but your config does not grant ${missingRequired.length === 1 ? 'it' : 'them'}; add ${grantLine(missingRequired)} to runtime.toml if you want this plugin to receive ${missingRequired.length === 1 ? 'it' : 'them'}`,
      );
    }
    for (const ref of findEnvReferences(manifest.runtime)) {
      if (!seen.has(ref.name)) {
        problems.push(
          `plugin ${pluginId}: ${ref.key} uses \${${ref.name}}, which the manifest does not declare; a plugin may only expand variables listed in its env_from_host or requires_env`,
        );
      } else if (!pass.has(ref.name) && manifest.requires_env.includes(ref.name) === false) {
        problems.push(
          `plugin ${pluginId}: ${ref.key} uses \${${ref.name}}, which your config does not grant to it; add ${grantLine([ref.name])} to runtime.toml to pass it`,
        );
      }
    }
  }
  return {
    always: [...SAFE_CHILD_ENV],
    declared,
    granted,
    ignored: options.passEnv.filter((name) => !seen.has(name)),
    problems: [...new Set(problems)],
  };
}

/** The named variables of `env` that are set; nothing else. */
export function pickHostEnv(env: Readonly<Record<string, string | undefined>>, names: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of names) {
    const value = env[name];
    if (value !== undefined) out[name] = value;
  }
  return out;
}
