import { SAFE_CHILD_ENV } from '@trellis/sdk/internal';

/** Host variables a child inherits; everything else must be granted (`pass_env`) or listed in `[runtime.env]`. */
export const CHILD_ENV_ALLOW_LIST = SAFE_CHILD_ENV;

const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** The result of expanding `${VAR}` references: the text, or the names that were not set. */
export type ExpandResult = { readonly ok: true; readonly value: string } | { readonly ok: false; readonly missing: readonly string[] };

/**
 * Replaces each `${VAR}` in `template` with the variable's value from `env`. A reference to an
 * unset variable is an error naming the variable (never its value). `$${VAR}` is not special.
 */
export function expandEnvTemplate(template: string, env: Readonly<Record<string, string | undefined>>): ExpandResult {
  const missing: string[] = [];
  const value = template.replace(REFERENCE, (_match, name: string) => {
    const found = env[name];
    if (found === undefined) {
      missing.push(name);
      return '';
    }
    return found;
  });
  return missing.length === 0 ? { ok: true, value } : { ok: false, missing: [...new Set(missing)] };
}

/** Expands every value of a string map; the error lists each missing variable with the key that used it. */
export function expandEnvMap(
  map: Readonly<Record<string, string>>,
  env: Readonly<Record<string, string | undefined>>,
  where: string,
): { ok: true; value: Record<string, string> } | { ok: false; message: string } {
  const value: Record<string, string> = {};
  const problems: string[] = [];
  for (const [key, template] of Object.entries(map)) {
    const expanded = expandEnvTemplate(template, env);
    if (expanded.ok) value[key] = expanded.value;
    else problems.push(`${where}.${key} uses ${expanded.missing.map((m) => '${' + m + '}').join(', ')}`);
  }
  if (problems.length > 0) {
    return {
      ok: false,
      message: `${problems.join('; ')}, but the variable is not set in the host environment; set it or remove the reference`,
    };
  }
  return { ok: true, value };
}

/**
 * The whole environment of a plugin child: the allow-listed host variables plus the manifest's
 * `[runtime.env]` (already expanded), which wins on conflict.
 */
export function buildChildEnv(
  hostEnv: Readonly<Record<string, string | undefined>>,
  extra: Readonly<Record<string, string>>,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of CHILD_ENV_ALLOW_LIST) {
    const value = hostEnv[name];
    if (value !== undefined) env[name] = value;
  }
  return { ...env, ...extra };
}
