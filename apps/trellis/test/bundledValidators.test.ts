import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createSchemaValidatorCache, precompiledSchema } from '@trellis/runtime/validation';
import { BUNDLED_PLUGINS } from '../src/bundled.gen.ts';
import { BUNDLED_INPUT_VALIDATORS } from '../src/bundledValidators.gen.ts';
import { assemble } from '../src/index.ts';
import { precompilable, renderBundledValidators } from '../scripts/bundledValidators.ts';

const VALUES: unknown[] = [
  null,
  true,
  false,
  0,
  1,
  -1,
  1.5,
  2 ** 53,
  '',
  'x',
  'ü'.repeat(70),
  'x'.repeat(5000),
  [],
  ['a'],
  [1, 2],
  {},
  { a: 1 },
];

/** Inputs that reach every branch a tool's schema has: each example, each property given each kind of value, unknown keys. */
function inputsFor(schema: Readonly<Record<string, unknown>>, examples: ReadonlyArray<{ input: unknown }>): unknown[] {
  const base = (examples[0]?.input ?? {}) as Record<string, unknown>;
  const properties = Object.keys((schema.properties as Record<string, unknown> | undefined) ?? {});
  const inputs: unknown[] = [...VALUES, ...examples.map((e) => e.input), { unknown_key: 1 }, { ...base, unknown_key: 'x' }];
  for (const name of properties) {
    for (const value of VALUES) inputs.push({ [name]: value }, { ...base, [name]: value }, { ...base, [name]: [value] });
  }
  return inputs;
}

describe('the bundled tools’ validators compiled by the build', () => {
  it('check every input exactly as the runtime’s own compile of the same schema: same errors, same defaults filled in', () => {
    expect(BUNDLED_INPUT_VALIDATORS.length).toBeGreaterThan(10);
    const cache = createSchemaValidatorCache();
    let checked = 0;
    for (const [p, t, validator] of BUNDLED_INPUT_VALIDATORS) {
      const plugin = BUNDLED_PLUGINS[p]!;
      const tool = plugin.tools[t]!;
      const label = `${plugin.manifest.id}.${tool.name}`;
      const compiled = cache.get(tool.inputSchema, { trusted: true });
      if (!compiled.ok) throw new Error(`${label}: ${compiled.problem}`);
      const built = precompiledSchema(validator);
      expect([built.hash, built.fillsDefaults], label).toEqual([compiled.hash, compiled.fillsDefaults]);
      for (const input of inputsFor(tool.inputSchema, tool.examples)) {
        const a = structuredClone(input);
        const b = structuredClone(input);
        expect(built.check(a), `${label} ${JSON.stringify(input)?.slice(0, 80)}`).toEqual(compiled.check(b));
        expect(a).toEqual(b);
        checked += 1;
      }
    }
    expect(checked).toBeGreaterThan(1000);
  });

  it('cover every bundled tool except those whose schema needs the runtime (a pattern)', () => {
    const built = new Set(BUNDLED_INPUT_VALIDATORS.map(([p, t]) => `${p}/${t}`));
    for (const [p, plugin] of BUNDLED_PLUGINS.entries()) {
      for (const [t, tool] of plugin.tools.entries()) {
        expect(built.has(`${p}/${t}`), `${plugin.manifest.id}.${tool.name}`).toBe(precompilable(tool.inputSchema));
      }
    }
  });

  it('leave to the runtime a schema with a pattern, another dialect or one over the safety limits', () => {
    expect(precompilable({ type: 'object', properties: { n: { type: 'integer' } } })).toBe(true);
    expect(precompilable({ type: 'object', properties: { id: { type: 'string', pattern: '^a+$' } } })).toBe(false);
    expect(precompilable({ type: 'object', patternProperties: { '^x': {} } })).toBe(false);
    expect(precompilable({ $schema: 'http://json-schema.org/draft-07/schema#', type: 'object' })).toBe(false);
    let deep: Record<string, unknown> = { type: 'object' };
    for (let i = 0; i < 100; i += 1) deep = { type: 'object', properties: { x: deep } };
    expect(precompilable(deep)).toBe(false);
    // Nothing to compile: a module with an empty table.
    expect(renderBundledValidators([{ tools: [] }])).toContain('BUNDLED_INPUT_VALIDATORS');
  });
});

describe('a bundled tool’s first call', () => {
  const dirs: string[] = [];
  afterEach(() => {
    vi.restoreAllMocks();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('validates with the build’s validator: ajv compiles nothing, and a bad input is refused with the same message', async () => {
    const compile = vi.spyOn(Ajv2020.prototype, 'compile');
    const dir = mkdtempSync(join(tmpdir(), 'trellis-prevalidate-'));
    dirs.push(dir);
    const assembly = await assemble({ workspace: dir, home: dir, env: { PATH: process.env.PATH } });
    try {
      const outcomes = await Promise.all(
        Array.from({ length: 100 }, (_, i) => assembly.runtime.invoke({ name: 'builtin-tools.echo', input: { n: i } })),
      );
      expect(outcomes.every((o) => o.ok)).toBe(true);
      expect(await assembly.runtime.invoke({ name: 'builtin-tools.now', input: { timezone: 3 } })).toEqual({
        ok: false,
        error: { code: 'INPUT_INVALID', message: 'invalid arguments for builtin-tools.now:\n/timezone: must be string', retryable: false },
      });
      expect(compile).not.toHaveBeenCalled();
    } finally {
      await assembly.dispose();
    }
  });
});
