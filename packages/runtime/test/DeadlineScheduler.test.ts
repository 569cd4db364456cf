import { describe, expect, it } from 'vitest';
import { DeadlineScheduler, type Expirable } from '../src/DeadlineScheduler.ts';

function item(name: string, deadlineAt: number, expired: string[]): Expirable & { name: string } {
  return { name, deadlineAt, heapIndex: -1, expire: () => void expired.push(name) };
}

describe('DeadlineScheduler', () => {
  it('expires items in deadline order and never expires removed ones', async () => {
    const expired: string[] = [];
    const scheduler = new DeadlineScheduler();
    const now = performance.now();
    const items = [
      item('c', now + 30, expired),
      item('a', now + 10, expired),
      item('e', now + 50, expired),
      item('b', now + 20, expired),
      item('d', now + 40, expired),
    ];
    for (const i of items) scheduler.add(i);
    scheduler.remove(items[3] as Expirable); // b
    scheduler.remove(items[3] as Expirable); // removing twice is harmless
    expect(scheduler.size).toBe(4);
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(expired).toEqual(['a', 'c', 'd', 'e']);
    expect(scheduler.size).toBe(0);
  });

  it('keeps the heap ordered under random adds and removes', () => {
    const scheduler = new DeadlineScheduler();
    const live = new Set<Expirable>();
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    for (let step = 0; step < 2_000; step++) {
      if (live.size > 0 && random() < 0.45) {
        const victim = [...live][Math.floor(random() * live.size)] as Expirable;
        scheduler.remove(victim);
        live.delete(victim);
      } else {
        const added = item(`i${step}`, 1e9 + random() * 1e6, []);
        scheduler.add(added);
        live.add(added);
      }
      const heap = scheduler.items();
      expect(heap.length).toBe(live.size);
    }
    const internal = (scheduler as unknown as { heap: Expirable[] }).heap;
    internal.forEach((node, index) => {
      expect(node.heapIndex).toBe(index);
      if (index > 0) expect(internal[(index - 1) >> 1]!.deadlineAt <= node.deadlineAt).toBe(true);
    });
    scheduler.clear();
    expect(scheduler.size).toBe(0);
  });
});
