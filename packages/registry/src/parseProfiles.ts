import { parse } from 'smol-toml';
import { ERROR_CODES } from '@trellis/sdk';
import type { ProfileDefinition, ProfilesData, Reason } from './types.ts';

/** What {@link parseProfiles} returns. */
export interface ParseProfilesResult {
  readonly value: ProfilesData;
  readonly warnings: readonly Reason[];
  readonly errors: readonly Reason[];
}

/**
 * Parses `config/profiles.toml`: one table per profile with an optional `description` and
 * `includes = ["<other profile>", …]`. Unknown includes and include cycles are errors. Pure.
 */
export function parseProfiles(text: string): ParseProfilesResult {
  let doc: Record<string, unknown>;
  try {
    doc = parse(text, { maxDepth: 8, unsafeKeyBehaviour: 'throw' }) as Record<string, unknown>;
  } catch (error) {
    const e = error as { message?: unknown; line?: unknown; column?: unknown };
    const first = String(e.message ?? error).split('\n', 1)[0]!;
    return {
      value: {},
      warnings: [],
      errors: [{ code: ERROR_CODES.TOML_SYNTAX, message: `profiles.toml line ${String(e.line)}, column ${String(e.column)}: ${first}` }],
    };
  }
  const errors: Reason[] = [];
  const warnings: Reason[] = [];
  const value: Record<string, ProfileDefinition> = {};
  for (const [name, raw] of Object.entries(doc)) {
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
      errors.push({ code: ERROR_CODES.CONFIG_SCHEMA, message: `profiles.toml ${name}: must be a table like [${name}]` });
      continue;
    }
    const table = raw as Record<string, unknown>;
    const description = typeof table.description === 'string' ? table.description : '';
    const includes = table.includes ?? [];
    if (!Array.isArray(includes) || includes.some((x) => typeof x !== 'string')) {
      errors.push({ code: ERROR_CODES.CONFIG_SCHEMA, message: `profiles.toml ${name}.includes: must be a list of profile names` });
      continue;
    }
    for (const key of Object.keys(table)) {
      if (key !== 'description' && key !== 'includes')
        warnings.push({
          code: ERROR_CODES.UNKNOWN_KEY,
          message: `profiles.toml ${name}.${key}: unknown key; a profile has description and includes`,
        });
    }
    value[name] = Object.freeze({ description, includes: Object.freeze([...(includes as string[])]) });
  }
  for (const [name, def] of Object.entries(value)) {
    for (const inc of def.includes) {
      if (!(inc in value))
        errors.push({ code: ERROR_CODES.CONFIG_SCHEMA, message: `profiles.toml ${name}.includes: unknown profile "${inc}"` });
    }
    if (includesItself(value, name)) {
      errors.push({
        code: ERROR_CODES.CONFIG_SCHEMA,
        message: `profiles.toml ${name}.includes: the includes chain comes back to "${name}"; remove the cycle`,
      });
    }
  }
  return { value: Object.freeze(value), warnings, errors };
}

function includesItself(profiles: ProfilesData, name: string): boolean {
  const seen = new Set<string>();
  const queue = [...(profiles[name]?.includes ?? [])];
  while (queue.length > 0) {
    const next = queue.shift()!;
    if (next === name) return true;
    if (seen.has(next)) continue;
    seen.add(next);
    queue.push(...(profiles[next]?.includes ?? []));
  }
  return false;
}
