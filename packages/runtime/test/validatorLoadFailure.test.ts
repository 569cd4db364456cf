import { afterAll, describe, expect, it, vi } from 'vitest';
import { createToolRuntime } from '../src/index.ts';
import { descriptor, fakeImplementation, runtimeConfig, staticCatalog } from './helpers.ts';

const state = vi.hoisted(() => ({ fail: true, imports: 0 }));
vi.mock('../src/SchemaValidatorCache.ts', async (importOriginal) => {
  state.imports += 1;
  if (state.fail) throw new Error('the validator module could not be read');
  return importOriginal();
});

describe('a validator load that fails', () => {
  const impl = fakeImplementation('q', { work: () => 'done' });
  const runtime = createToolRuntime({
    config: runtimeConfig(),
    catalog: staticCatalog([descriptor('q.work')]),
    implementations: new Map([['q', impl]]),
  });
  afterAll(() => runtime.dispose());

  it('ends every call parked for it with INTERNAL_ERROR, and the next call loads it again', async () => {
    const outcomes = await Promise.all(Array.from({ length: 20 }, () => runtime.invoke({ name: 'q.work', input: {} })));
    expect(state.imports).toBe(1);
    for (const outcome of outcomes) {
      expect(outcome).toMatchObject({ ok: false, error: { code: 'INTERNAL_ERROR' } });
      // vitest words the factory's throw its own way; the call names itself and says it is a bug.
      expect(!outcome.ok && outcome.error.message).toMatch(
        /^Trellis failed while running q\.work: .*\(a bug in Trellis; please report it\)$/s,
      );
    }
    expect(impl.dispatches.work).toBeUndefined();
    state.fail = false;
    expect(await runtime.invoke({ name: 'q.work', input: {} })).toEqual({ ok: true, value: 'done' });
    expect(state.imports).toBe(2);
  });
});
