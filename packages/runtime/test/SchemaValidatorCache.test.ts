import { describe, expect, it } from 'vitest';
import { createSchemaValidatorCache } from '../src/SchemaValidatorCache.ts';

describe('createSchemaValidatorCache', () => {
  it('compiles equal schemas once, whatever their key order or object identity', () => {
    const cache = createSchemaValidatorCache();
    const a = cache.get({ type: 'object', properties: { n: { type: 'integer', minimum: 1 } } });
    const b = cache.get({ properties: { n: { minimum: 1, type: 'integer' } }, type: 'object' });
    expect(a).toBe(b);
    expect(cache.size).toBe(1);
    cache.get({ type: 'object', properties: { n: { type: 'integer', minimum: 2 } } });
    expect(cache.size).toBe(2);
  });

  it('reports problems as path: message lines, at most 20 of them', () => {
    const cache = createSchemaValidatorCache();
    const properties = Object.fromEntries(Array.from({ length: 25 }, (_, i) => [`p${String(i).padStart(2, '0')}`, { type: 'string' }]));
    const compiled = cache.get({ type: 'object', properties, required: Object.keys(properties) });
    expect(compiled.ok).toBe(true);
    if (!compiled.ok) return;
    const lines = compiled.check({});
    expect(lines?.length).toBe(21);
    expect(lines?.[0]).toBe("(root): must have required property 'p00'");
    expect(lines?.[20]).toBe('… and 5 more');
    expect(compiled.check(Object.fromEntries(Object.keys(properties).map((k) => [k, 'v'])))).toBeUndefined();
  });

  it('reuses a schema with a root $id without "already exists" errors', () => {
    const cache = createSchemaValidatorCache();
    const first = cache.get({ $id: 'urn:trellis:same', type: 'string' });
    const second = cache.get({ $id: 'urn:trellis:same', type: 'number' });
    expect([first.ok, second.ok]).toEqual([true, true]);
    if (second.ok) expect(second.check(1)).toBeUndefined();
  });

  it('skips only the meta-schema check for a trusted (build-checked) schema; the safety limits still apply', () => {
    const cache = createSchemaValidatorCache();
    // minLength must be a non-negative integer: only the meta-schema says so.
    const untrusted = cache.get({ type: 'string', minLength: -1 });
    expect(untrusted.ok).toBe(false);
    if (!untrusted.ok) expect(untrusted.problem).toMatch(/^the schema does not compile: schema is invalid: .*minLength must be >= 0/);
    const trusted = createSchemaValidatorCache().get({ type: 'string', minLength: -1 }, { trusted: true });
    expect(trusted.ok).toBe(true);
    if (trusted.ok) expect([trusted.check('x'), trusted.check(1)]).toEqual([undefined, ['(root): must be string']]);
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 200; i++) deep = { type: 'object', properties: { a: deep } };
    const tooDeep = createSchemaValidatorCache().get(deep, { trusted: true });
    expect(tooDeep.ok).toBe(false);
  });
});
