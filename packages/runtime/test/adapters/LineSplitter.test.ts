import { describe, expect, it } from 'vitest';
import { LineSplitter } from '../../src/adapters/LineSplitter.ts';
import type { SplitEvent } from '../../src/adapters/LineSplitter.ts';

function split(max: number, chunks: string[]): SplitEvent[] {
  const events: SplitEvent[] = [];
  const splitter = new LineSplitter(max, (e) => events.push(e));
  for (const c of chunks) splitter.push(Buffer.from(c, 'utf8'));
  return events;
}

describe('LineSplitter', () => {
  it('emits whole lines across chunk boundaries and holds back a trailing partial line', () => {
    expect(split(100, ['{"a":1}\n', '{"b"', ':2}\n{"c', '":3}\n{"d":'])).toEqual([
      { kind: 'line', line: '{"a":1}' },
      { kind: 'line', line: '{"b":2}' },
      { kind: 'line', line: '{"c":3}' },
    ]);
  });

  it('keeps multi-byte characters split between chunks intact', () => {
    const bytes = Buffer.from('"héllo"\n', 'utf8');
    const events: SplitEvent[] = [];
    const splitter = new LineSplitter(100, (e) => events.push(e));
    splitter.push(bytes.subarray(0, 3));
    splitter.push(bytes.subarray(3));
    expect(events).toEqual([{ kind: 'line', line: '"héllo"' }]);
  });

  it('drops a line longer than the limit up to its newline, then carries on', () => {
    expect(split(10, ['0123456789', 'abc', 'def\nok\n', '01234567890\n'])).toEqual([
      { kind: 'oversize', bytes: 16 },
      { kind: 'line', line: 'ok' },
      { kind: 'oversize', bytes: 11 },
    ]);
  });
});
