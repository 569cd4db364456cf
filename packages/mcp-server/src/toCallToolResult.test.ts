import { describe, expect, it } from 'vitest';
import { toCallToolResult } from './toCallToolResult.ts';

describe('toCallToolResult', () => {
  it('sends a string as one text block and an object as structuredContent plus its JSON', () => {
    expect(toCallToolResult({ ok: true, value: 'hi' })).toEqual({ content: [{ type: 'text', text: 'hi' }] });
    expect(toCallToolResult({ ok: true, value: { a: [1, 2] } })).toEqual({
      content: [{ type: 'text', text: '{"a":[1,2]}' }],
      structuredContent: { a: [1, 2] },
    });
    expect(toCallToolResult({ ok: true, value: null })).toEqual({ content: [{ type: 'text', text: 'null' }] });
  });

  it('passes a { content } value of valid MCP blocks through, and treats anything else as data', () => {
    const blocks = [
      { type: 'text', text: 'x' },
      { type: 'image', data: 'AAAA', mimeType: 'image/png' },
      { type: 'resource', resource: { uri: 'test://r', text: 't' } },
      { type: 'resource_link', uri: 'file:///a', name: 'a' },
    ];
    expect(toCallToolResult({ ok: true, value: { content: blocks } })).toEqual({ content: blocks });
    const notBlocks = { content: [{ type: 'image', data: 'AAAA' }] };
    expect(toCallToolResult({ ok: true, value: notBlocks }).structuredContent).toEqual(notBlocks);
    const extraKey = { content: [{ type: 'text', text: 'x' }], more: 1 };
    expect(toCallToolResult({ ok: true, value: extraKey }).structuredContent).toEqual(extraKey);
  });

  it('makes a failure an isError result naming the code', () => {
    expect(toCallToolResult({ ok: false, error: { code: 'POLICY_DENIED', message: 'no', retryable: false } })).toEqual({
      isError: true,
      content: [{ type: 'text', text: 'POLICY_DENIED: no' }],
      _meta: { 'dev.trellis/error': { code: 'POLICY_DENIED', retryable: false } },
    });
  });
});
