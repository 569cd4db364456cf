import { afterEach, describe, expect, it } from 'vitest';
import type { AuditRecord } from '../src/AuditLog.ts';
import type { ExecutionEvent } from '../src/ExecutionEvent.ts';
import type { ImplementationOutcome } from '../src/PluginImplementation.ts';
import { createToolRuntime, type ToolRequest, type ToolRuntime } from '../src/index.ts';
import { descriptor, fakeImplementation, runtimeConfig, staticCatalog } from './helpers.ts';

const runtimes: ToolRuntime[] = [];
afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((runtime) => runtime.dispose()));
});

describe('the invoke stages', () => {
  it('resolve a request that is not an object to an outcome, and audit it, instead of rejecting', async () => {
    const records: AuditRecord[] = [];
    const events: ExecutionEvent[] = [];
    const runtime = createToolRuntime({
      config: runtimeConfig(),
      catalog: staticCatalog([descriptor('demo.echo')]),
      implementations: new Map([['demo', fakeImplementation('demo', { echo: (input) => input })]]),
      hooks: [(event) => void events.push(event)],
      auditLog: { write: (record) => void records.push(record), close: async () => {} },
    });
    runtimes.push(runtime);
    const outcome = await runtime.invoke(undefined as unknown as ToolRequest);
    expect(outcome).toEqual({
      ok: false,
      error: {
        code: 'TOOL_NOT_FOUND',
        message: 'no tool is named undefined; list the offered tools with `trellis tools list`',
        retryable: false,
      },
    });
    expect(events.map((event) => event.type)).toEqual(['lookup', 'outcome']);
    expect(records.map(({ tool, argKeys, outcome: code, attempts }) => ({ tool, argKeys, code, attempts }))).toEqual([
      { tool: 'undefined', argKeys: [], code: 'TOOL_NOT_FOUND', attempts: 0 },
    ]);
  });

  it('keep each runtime’s gates to itself: a full plugin in one runtime does not hold up another', async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const make = (): ToolRuntime => {
      const impl = fakeImplementation('demo', { wait: () => held.then(() => 'late'), now: () => 'now' });
      const runtime = createToolRuntime({
        config: runtimeConfig({ max_concurrency: 1 }),
        catalog: staticCatalog([descriptor('demo.wait'), descriptor('demo.now')]),
        implementations: new Map([['demo', impl]]),
      });
      runtimes.push(runtime);
      return runtime;
    };
    const first = make();
    const second = make();
    const waiting = first.invoke({ name: 'demo.wait' });
    const order: string[] = [];
    const queued = first.invoke({ name: 'demo.now' }).then((outcome) => (order.push('first runtime'), outcome));
    const other = await second.invoke({ name: 'demo.now' });
    order.push('second runtime');
    expect(other).toEqual({ ok: true, value: 'now' });
    release();
    expect(await waiting).toEqual({ ok: true, value: 'late' });
    expect(await queued).toEqual({ ok: true, value: 'now' });
    expect(order).toEqual(['second runtime', 'first runtime']);
  });

  it('name an implementation that resolves to no outcome at all, instead of failing inside Trellis', async () => {
    const impl = fakeImplementation('demo', {}, { outcomes: { nothing: () => null as unknown as ImplementationOutcome } });
    const runtime = createToolRuntime({
      config: runtimeConfig(),
      catalog: staticCatalog([descriptor('demo.nothing')]),
      implementations: new Map([['demo', impl]]),
    });
    runtimes.push(runtime);
    expect(await runtime.invoke({ name: 'demo.nothing' })).toEqual({
      ok: false,
      error: {
        code: 'INTERNAL_ERROR',
        message: 'the implementation of plugin demo returned something that is not an outcome for demo.nothing',
        retryable: false,
      },
    });
  });
});
