import { describe, expect, it } from 'vitest';
import { canonicalJson, hashJson } from './ToolDescriptor.ts';

describe('canonicalJson', () => {
  it('sorts keys at every level and otherwise writes what JSON.stringify writes', () => {
    const value = { b: [3, { z: 1, a: [null, 'x', undefined] }], a: { d: true, c: 'é"\\n' }, u: undefined, n: -0.5 };
    expect(canonicalJson(value)).toBe('{"a":{"c":"é\\"\\\\n","d":true},"b":[3,{"a":[null,"x",null],"z":1}],"n":-0.5}');
    expect(JSON.parse(canonicalJson(value))).toEqual(JSON.parse(JSON.stringify(value)));
    expect([canonicalJson([]), canonicalJson({}), canonicalJson('s'), canonicalJson(null), canonicalJson(undefined)]).toEqual([
      '[]',
      '{}',
      '"s"',
      'null',
      'null',
    ]);
  });

  it('handles nesting far deeper than the call stack allows, and refuses cycles', () => {
    let deep: unknown = {};
    for (let level = 0; level < 100_000; level += 1) deep = { items: [deep] };
    expect(canonicalJson(deep).length).toBe(100_000 * '{"items":[]}'.length + 2);
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = { again: cyclic };
    expect(() => canonicalJson(cyclic)).toThrow(new TypeError('canonicalJson: the value contains a cycle'));
    const shared = { x: 1 };
    expect(canonicalJson({ a: shared, b: [shared, shared] })).toBe('{"a":{"x":1},"b":[{"x":1},{"x":1}]}');
  });

  it('hashes equal schemas equally whatever their key order', () => {
    expect(hashJson({ type: 'object', properties: { a: { type: 'string' } } })).toBe(
      hashJson({ properties: { a: { type: 'string' } }, type: 'object' }),
    );
    expect(hashJson({})).toBe('44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a');
  });
});
