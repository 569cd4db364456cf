import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createToolRuntime, type ToolRuntime } from '../src/index.ts';
import { descriptor, fakeImplementation, runtimeConfig, staticCatalog } from './helpers.ts';

const runtimes: ToolRuntime[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(runtimes.splice(0).map((runtime) => runtime.dispose()));
});

describe('a burst of first calls', () => {
  it('compiles the schema once and every call succeeds', async () => {
    // Every draft 2020-12 engine compiles through this prototype, whichever cache made it.
    const compile = vi.spyOn(Ajv2020.prototype, 'compile');
    const echo = descriptor('demo.echo', { inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } });
    const impl = fakeImplementation('demo', { echo: (input) => input });
    const runtime = createToolRuntime({
      config: runtimeConfig({ max_concurrency: 1000 }),
      catalog: staticCatalog([echo]),
      implementations: new Map([['demo', impl]]),
    });
    runtimes.push(runtime);
    const outcomes = await Promise.all(
      Array.from({ length: 200 }, (_, i) => runtime.invoke({ name: 'demo.echo', input: { text: `t${i}` } })),
    );
    expect(outcomes.filter((o) => !o.ok)).toEqual([]);
    expect(outcomes[199]).toEqual({ ok: true, value: { text: 't199' } });
    expect(compile).toHaveBeenCalledTimes(1);
  });
});
