import { describe, expect, it } from 'vitest';
import { onlyDefaults, runtimeConfigDefaults } from './runtimeConfigDefaults.ts';
import { RuntimeConfigSchema } from './RuntimeConfigSchema.ts';

describe('runtimeConfigDefaults', () => {
  it('equals the schema defaults', () => {
    expect(runtimeConfigDefaults()).toEqual(RuntimeConfigSchema.parse({}));
  });

  it('returns a fresh object each time', () => {
    const a = runtimeConfigDefaults();
    a.plugins.allow.push('x');
    expect(runtimeConfigDefaults().plugins.allow).toEqual([]);
  });
});

describe('onlyDefaults', () => {
  const defaults = runtimeConfigDefaults();
  it('accepts any subset of the defaults', () => {
    expect(onlyDefaults({}, defaults)).toBe(true);
    expect(onlyDefaults({ plugins: { profile: 'minimal', entries: {} }, runtime: { policy: { allow: ['*'] } } }, defaults)).toBe(true);
  });

  it('refuses anything that differs, adds a key or changes a type', () => {
    expect(onlyDefaults({ plugins: { profile: 'full' } }, defaults)).toBe(false);
    expect(onlyDefaults({ plugins: { entries: { x: {} } } }, defaults)).toBe(false);
    expect(onlyDefaults({ runtime: { capabilities: ['*', 'x'] } }, defaults)).toBe(false);
    expect(onlyDefaults({ runtime: { capabilities: '*' } }, defaults)).toBe(false);
    expect(onlyDefaults({ runtime: { tools: [] } }, defaults)).toBe(false);
    expect(onlyDefaults({ runtime: { max_retries: '0' } }, defaults)).toBe(false);
    expect(onlyDefaults({ extra: 1 }, defaults)).toBe(false);
    expect(onlyDefaults([], defaults)).toBe(false);
  });
});
