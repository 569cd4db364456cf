import { describe, expect, it } from 'vitest';
import { ToolError } from '@trellis/sdk';
import { testToolContext, toolErrorOf } from './testToolContext.ts';

describe('testToolContext', () => {
  it('builds the context a runtime would, with what it is given', () => {
    const ctx = testToolContext({ config: { depth: 2 }, tool: 'x.y', workspace: '/w', env: { A: '1' } });
    expect([ctx.config, ctx.tool, ctx.workspace.root, ctx.env, ctx.callId, ctx.signal.aborted, ctx.host.plugins()]).toEqual([
      { depth: 2 },
      'x.y',
      '/w',
      { A: '1' },
      'test-call',
      false,
      [],
    ]);
  });

  it('toolErrorOf returns the code and normalized message, and fails when nothing was thrown', async () => {
    expect(
      await toolErrorOf(
        () => Promise.reject(new ToolError('NOT_FOUND', 'no /tmp/x here')),
        (t) => t.replace('/tmp', '<tmp>'),
      ),
    ).toEqual({
      code: 'NOT_FOUND',
      message: 'no <tmp>/x here',
    });
    await expect(toolErrorOf(() => 1)).rejects.toThrow('expected a ToolError, but the call succeeded');
    await expect(toolErrorOf(() => Promise.reject(new TypeError('bug')))).rejects.toThrow('bug');
  });
});
