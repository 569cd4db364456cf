import { describe, expect, it } from 'vitest';
import { MAX_RENDERED_DEPTH, previewPluginValue, renderPluginError, renderPluginValue } from '../../src/adapters/renderPluginValue.ts';

const nested = (levels: number): unknown => JSON.parse('['.repeat(levels) + ']'.repeat(levels));

describe('renderPluginValue', () => {
  it('renders a value as JSON up to MAX_RENDERED_DEPTH levels and refuses one level more', () => {
    expect(renderPluginValue({ code: 'X', detail: [1, 'two', null] })).toEqual({ ok: true, text: '{"code":"X","detail":[1,"two",null]}' });
    expect(renderPluginValue(nested(MAX_RENDERED_DEPTH))).toEqual({ ok: true, text: '['.repeat(64) + ']'.repeat(64) });
    expect(renderPluginValue(nested(MAX_RENDERED_DEPTH + 1))).toEqual({ ok: false, problem: 'nests deeper than 64 levels' });
  });

  it('refuses a value nested 100 000 levels deep instead of overflowing the stack', () => {
    expect(renderPluginValue({ detail: nested(100_000) })).toEqual({ ok: false, problem: 'nests deeper than 64 levels' });
  });

  it('reports what JSON.stringify refuses instead of throwing', () => {
    expect(renderPluginValue({ big: 1n })).toEqual({
      ok: false,
      problem: 'cannot be written as JSON (Do not know how to serialize a BigInt)',
    });
  });
});

describe('renderPluginError', () => {
  it('keeps a string as it is and writes anything else as JSON', () => {
    expect(renderPluginError('it went wrong')).toEqual({ ok: true, text: 'it went wrong' });
    expect(renderPluginError({ reason: 'x' })).toEqual({ ok: true, text: '{"reason":"x"}' });
    expect(renderPluginError(undefined)).toEqual({ ok: true, text: '"no message"' });
    expect(renderPluginError(nested(100_000))).toEqual({ ok: false, problem: 'nests deeper than 64 levels' });
  });
});

describe('previewPluginValue', () => {
  it('writes a value that fits exactly as JSON.stringify does', () => {
    const value = {
      id: 1,
      type: 'initialize_response',
      success: false,
      error: 'config "rejected"\n',
      list: [true, 2.5, null, { a: [] }],
      empty: {},
    };
    expect(previewPluginValue(value, 1000)).toBe(JSON.stringify(value));
    expect(previewPluginValue(7)).toBe('7');
  });

  it('cuts a long value at 120 characters and marks the cut', () => {
    const value = { text: 'x'.repeat(500) };
    expect(previewPluginValue(value)).toBe(`${JSON.stringify(value).slice(0, 120)}…`);
  });

  it('shows the start of a value nested 100 000 levels deep', () => {
    expect(previewPluginValue({ healthy: false, detail: nested(100_000) }, 30)).toBe('{"healthy":false,"detail":[[[[…');
  });

  it('shows the start of a 10 MiB string or key without copying all of it', () => {
    const long = 'y'.repeat(10 * 1024 * 1024);
    expect(previewPluginValue(long, 10)).toBe('"yyyyyyyyy…');
    expect(previewPluginValue({ [long]: 1 }, 10)).toBe('{"yyyyyyyy…');
  });
});
