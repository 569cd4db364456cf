import { describe, expect, it, vi } from 'vitest';
import { createToolRuntime } from '../src/index.ts';
import { descriptor, fakeImplementation, runtimeConfig, staticCatalog } from './helpers.ts';

const state = vi.hoisted(() => ({ imports: 0 }));
vi.mock('../src/SchemaValidatorCache.ts', async (importOriginal) => {
  state.imports += 1;
  return importOriginal();
});

describe('preloadValidators', () => {
  it('loads the validator when the runtime is created, before any call, and the first call uses that load', async () => {
    const make = (preloadValidators: boolean) =>
      createToolRuntime({
        config: runtimeConfig(),
        catalog: staticCatalog([descriptor('q.work')]),
        implementations: new Map([['q', fakeImplementation('q', { work: () => 'done' })]]),
        preloadValidators,
      });
    const lazy = make(false);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(state.imports).toBe(0);
    const eager = make(true);
    // No call yet: the runtime loads it on its own (waited for without a tight clock).
    for (let waited = 0; state.imports === 0 && waited < 10_000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(state.imports).toBe(1);
    expect(await eager.invoke({ name: 'q.work', input: {} })).toEqual({ ok: true, value: 'done' });
    expect(state.imports).toBe(1);
    await Promise.all([lazy.dispose(), eager.dispose()]);
  });
});
