import { describe, expect, it } from 'vitest';
import { asReloadResult, describeReload } from './describeReload.ts';

const applied = {
  status: 'applied',
  generation: 3,
  previous: 2,
  trigger: 'watch',
  at: '2026-11-28T07:00:00.000Z',
  durationMs: 120.4,
  changes: { added: ['notes'], removed: [], changed: ['fs'], unchanged: ['a', 'b'] },
  warnings: [],
  notApplied: [
    { code: 'MANIFEST_INVALID', message: 'plugin fs: plugin.toml: TOML syntax error; it keeps serving with its last valid plugin.toml' },
  ],
};
const rejected = {
  status: 'rejected',
  generation: 2,
  trigger: 'signal',
  at: '2026-11-28T07:00:00.000Z',
  durationMs: 4,
  errors: [{ code: 'TOML_SYNTAX', message: 'runtime.toml:3: expected ]' }],
};

describe('asReloadResult: a reload result read back from another process', () => {
  it('takes whole results of each status, as JSON brings them', () => {
    for (const value of [applied, rejected, { status: 'unchanged', generation: 1, trigger: 'api', at: 'x', durationMs: 1 }])
      expect(asReloadResult(JSON.parse(JSON.stringify(value)))).toEqual(value);
    expect(describeReload(asReloadResult(applied)!)).toBe(
      'reload (watch): generation 3 serves (started notes; restarted fs; 2 kept running) in 120 ms\n  not applied; fix and save again:\n' +
        '  MANIFEST_INVALID  plugin fs: plugin.toml: TOML syntax error; it keeps serving with its last valid plugin.toml',
    );
    // From a host of an older Trellis, without the list.
    const { notApplied: _, ...older } = applied;
    expect(describeReload(asReloadResult(older)!)).toBe(
      'reload (watch): generation 3 serves (started notes; restarted fs; 2 kept running) in 120 ms',
    );
    expect(describeReload(asReloadResult(rejected)!)).toBe(
      'reload (signal) rejected; generation 2 keeps serving. Fix and save again:\n  TOML_SYNTAX  runtime.toml:3: expected ]',
    );
  });

  it('refuses anything else rather than describe it wrongly', () => {
    const broken: unknown[] = [
      undefined,
      null,
      'applied',
      [],
      { ...applied, status: 'done' },
      { ...applied, generation: '3' },
      { ...applied, at: 5 },
      { ...applied, trigger: undefined },
      { ...applied, durationMs: null },
      { ...applied, changes: null },
      { ...applied, changes: { ...applied.changes, added: 'notes' } },
      { ...applied, changes: { ...applied.changes, unchanged: [1] } },
      { ...applied, warnings: undefined },
      { ...applied, previous: undefined },
      { ...applied, notApplied: [{ code: 'X' }] },
      { ...applied, notApplied: 'MANIFEST_INVALID' },
      { ...rejected, errors: undefined },
      { ...rejected, errors: [{ code: 'X' }] },
      { ...rejected, errors: ['TOML_SYNTAX'] },
    ];
    for (const value of broken) expect(asReloadResult(value), JSON.stringify(value)).toBeUndefined();
  });
});
