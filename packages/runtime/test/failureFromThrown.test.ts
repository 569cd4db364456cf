import { describe, expect, it } from 'vitest';
import { ToolError } from '@trellis/sdk';
import { describeValue, failureFromThrown } from '../src/outcomeFromThrown.ts';

describe('failureFromThrown', () => {
  it('keeps a ToolError’s code and retryable flag', () => {
    expect(failureFromThrown(new ToolError('NETWORK_ERROR', 'connection reset', { retryable: true }), 'web.fetch')).toEqual({
      code: 'NETWORK_ERROR',
      message: 'connection reset',
      retryable: true,
    });
  });

  it('accepts a ToolError from another copy of the sdk, and falls back to TOOL_FAILED for a malformed code', () => {
    const foreign = Object.assign(new Error('quota exceeded'), { name: 'ToolError', code: 'QUOTA', retryable: false });
    expect(failureFromThrown(foreign, 'x.y')).toEqual({ code: 'QUOTA', message: 'quota exceeded', retryable: false });
    expect(failureFromThrown(new ToolError('not a code', 'odd'), 'x.y')).toEqual({ code: 'TOOL_FAILED', message: 'odd', retryable: false });
  });

  it('renders any thrown value readably', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(
      [undefined, 'text', 3, true, null, 10n, Symbol('s'), function named() {}, [1, 'a'], cyclic, 'x'.repeat(300)].map(describeValue),
    ).toEqual([
      'undefined',
      '"text"',
      '3',
      'true',
      'null',
      '10n',
      'Symbol(s)',
      'a function (named)',
      '[1,"a"]',
      '[object Object]',
      `"${'x'.repeat(199)}…`,
    ]);
  });
});
