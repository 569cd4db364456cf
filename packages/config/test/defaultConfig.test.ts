import { readFileSync } from 'node:fs';
import { parse } from 'smol-toml';
import type { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { parseRuntimeConfig, RuntimeConfigSchema, PluginEntrySchema, EMBEDDED_CONFIG_NAME } from '@trellis/config';

const runtimeToml = readFileSync(new URL('../../../config/runtime.toml', import.meta.url), 'utf8');
const reference = readFileSync(new URL('../../../docs/config-reference.md', import.meta.url), 'utf8');

type Def = { type: string; innerType?: z.ZodType; shape?: Record<string, z.ZodType> };
const defOf = (s: z.ZodType): Def => s._zod.def as unknown as Def;

/** Dotted paths of every fixed key (objects, not records), depth first. */
function fixedKeyPaths(schema: z.ZodType, prefix = ''): string[] {
  let s = schema;
  while (defOf(s).innerType !== undefined) s = defOf(s).innerType as z.ZodType;
  const def = defOf(s);
  if (def.type !== 'object' || def.shape === undefined) return [];
  return Object.entries(def.shape).flatMap(([key, child]) => {
    const path = prefix === '' ? key : `${prefix}.${key}`;
    return [path, ...fixedKeyPaths(child, path)];
  });
}

describe('config/runtime.toml (the embedded default)', () => {
  it('parses with no warnings and no errors and equals the schema defaults', () => {
    expect(parseRuntimeConfig(runtimeToml, { fileName: EMBEDDED_CONFIG_NAME, env: {}, baseDir: '/workspace' })).toEqual({
      value: RuntimeConfigSchema.parse({}),
      warnings: [],
      errors: [],
    });
  });

  it('sets every fixed key explicitly', () => {
    const raw = parse(runtimeToml) as Record<string, unknown>;
    const missing = fixedKeyPaths(RuntimeConfigSchema).filter((path) => {
      let node: unknown = raw;
      for (const part of path.split('.')) {
        if (node === null || typeof node !== 'object' || !Object.hasOwn(node, part)) return true;
        node = (node as Record<string, unknown>)[part];
      }
      return false;
    });
    expect(missing).toEqual([]);
  });

  it('shows every [plugins.entries.<id>] key in its commented example', () => {
    const missing = Object.keys(PluginEntrySchema.shape).filter((key) => !new RegExp(`^#\\s+${key} = `, 'm').test(runtimeToml));
    expect(missing).toEqual([]);
  });
});

describe('docs/config-reference.md', () => {
  it('documents every key of runtime.toml', () => {
    const paths = [
      ...fixedKeyPaths(RuntimeConfigSchema),
      ...fixedKeyPaths(PluginEntrySchema, 'plugins.entries.<id>'),
      'runtime.tools.<key>',
    ];
    expect(paths.filter((path) => !reference.includes(`\`${path}\``) && !reference.includes(`\`[${path}]\``))).toEqual([]);
  });

  it('explains every config error code a user may see', () => {
    const codes = [
      'CONFIG_NOT_FOUND',
      'CONFIG_UNREADABLE',
      'CONFIG_TOO_LARGE',
      'CONFIG_ENCODING',
      'TOML_SYNTAX',
      'CONFIG_TOO_DEEP',
      'CONFIG_SCHEMA',
      'UNKNOWN_KEY',
      'FORBIDDEN_KEY',
      'ENV_VAR_MISSING',
      'ENV_VAR_SYNTAX',
      'CONFIG_INVALID',
    ];
    expect(codes.filter((code) => !reference.includes(`\`${code}\``))).toEqual([]);
  });
});
