import { describe, expect, it } from 'vitest';
import { describeTable } from '../src/describeTable.ts';
import type { Cell } from '../src/inferValue.ts';
import type { Table } from '../src/parseTable.ts';

describe('describeTable', () => {
  it('reads only the cells each row holds, not rows × columns', () => {
    let reads = 0;
    const row = (cells: Record<string, Cell>) =>
      new Proxy(cells, {
        get(target, key) {
          reads += 1;
          return Reflect.get(target, key);
        },
      });
    const table: Table = {
      format: 'json',
      hasHeader: true,
      headerSource: 'not applicable',
      columns: Array.from({ length: 1000 }, (_, i) => ({ name: `k${i}`, type: 'number' as const })),
      rows: [row({ k0: 4 }), ...Array.from({ length: 99 }, () => row({}))],
      raggedRows: [],
      warnings: [],
    };
    const stats = describeTable(table);
    expect(stats[0]).toEqual({ name: 'k0', type: 'number', nulls: 99, distinct: 1, distinct_capped: false, min: 4, max: 4, mean: 4 });
    expect(stats[999]).toEqual({ name: 'k999', type: 'number', nulls: 100, distinct: 0, distinct_capped: false });
    expect(reads).toBe(1);
  });
});
