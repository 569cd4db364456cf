/** The outcome of expanding `${VAR}` references in one string. */
export type EnvExpansion =
  | { readonly ok: true; readonly value: string; readonly expanded: readonly string[] }
  | { readonly ok: false; readonly missing: readonly string[]; readonly syntax: readonly string[] };

const REFERENCE = /\$\$\{|\$\{([^}]*)\}|\$\{/g;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Replaces every `${NAME}` with the variable's value; `$${` stands for a literal `${`. A variable
 * that is set to the empty string counts as set. `expanded` lists the substituted values, so the
 * caller can keep them out of every message. Names are `[A-Za-z_][A-Za-z0-9_]*`; anything else
 * after `${` (including an unclosed `${`) is listed in `syntax`, described for a message (the
 * text is from the file itself, never from the environment).
 */
export function expandEnvString(input: string, env: Readonly<Record<string, string | undefined>>): EnvExpansion {
  if (!input.includes('${')) return { ok: true, value: input, expanded: [] };
  const missing = new Set<string>();
  const syntax: string[] = [];
  const expanded: string[] = [];
  const value = input.replace(REFERENCE, (match: string, name: string | undefined) => {
    if (match === '$${') return '${';
    if (name === undefined) {
      syntax.push('"${" without a closing "}"');
      return '';
    }
    if (!NAME.test(name)) {
      syntax.push(JSON.stringify(match.length > 40 ? `${match.slice(0, 40)}…` : match));
      return '';
    }
    const found = Object.hasOwn(env, name) ? env[name] : undefined;
    if (found === undefined) {
      missing.add(name);
      return '';
    }
    expanded.push(found);
    return found;
  });
  if (missing.size > 0 || syntax.length > 0) return { ok: false, missing: [...missing], syntax };
  return { ok: true, value, expanded };
}
