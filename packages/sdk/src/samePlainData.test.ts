import { describe, expect, it } from 'vitest';
import { samePlainData } from './samePlainData.ts';

describe('samePlainData', () => {
  it('compares value by value, bytes included', () => {
    const facts = () => ({
      path: '/p',
      stat: { mode: 0o755, uid: 0 },
      folders: [{ path: '/r', stat: null }],
      bytes: Buffer.from('id = "a"'),
    });
    expect(samePlainData(facts(), facts())).toBe(true);
    expect(samePlainData(facts(), { ...facts(), bytes: Buffer.from('id = "b"') })).toBe(false);
    expect(samePlainData(facts(), { ...facts(), bytes: Buffer.from('id = "a" ') })).toBe(false);
    expect(samePlainData(facts(), { ...facts(), stat: { mode: 0o777, uid: 0 } })).toBe(false);
    expect(samePlainData(facts(), { ...facts(), folders: [{ path: '/r', stat: { mode: 0, uid: 0 } }] })).toBe(false);
    expect(samePlainData(facts(), { ...facts(), extra: undefined })).toBe(false);
    expect(samePlainData({ a: [1, 2] }, { a: { 0: 1, 1: 2 } })).toBe(false);
    expect(samePlainData({ a: null }, { a: {} })).toBe(false);
    expect(samePlainData([1, 2], [1, 2, 3])).toBe(false);
  });

  it('ignores key order, as canonicalJson equality does', () => {
    expect(samePlainData({ a: 1, b: [{ c: 'x', d: null }] }, { b: [{ d: null, c: 'x' }], a: 1 })).toBe(true);
    expect(samePlainData([1, 2], [2, 1])).toBe(false);
    expect(samePlainData(1, '1')).toBe(false);
  });

  it('sees into nothing but plain objects, arrays and bytes: a Date equals only itself', () => {
    const date = new Date('2024-01-01T00:00:00Z');
    expect(samePlainData({ expires: date }, { expires: date })).toBe(true);
    expect(samePlainData({ expires: date }, { expires: new Date('2031-01-01T00:00:00Z') })).toBe(false);
    expect(samePlainData({ expires: date }, { expires: new Date('2024-01-01T00:00:00Z') })).toBe(false);
    expect(samePlainData(new Map(), new Map())).toBe(false);
    expect(samePlainData(Object.create(null), Object.create(null))).toBe(true);
  });
});
