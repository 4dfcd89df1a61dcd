import { describe, expect, it } from 'vitest';
import { RecentMap, RecentSet } from './recent-entries.js';

describe('RecentMap', () => {
  it('keeps at least the newest `generation` entries and never more than twice as many', () => {
    const map = new RecentMap<number, string>(100);
    for (let i = 0; i < 1_000; i++) {
      map.set(i, `v${i}`);
      expect(map.size).toBeLessThanOrEqual(200);
      for (const newest of [i, i - 50, i - 99]) if (newest >= 0) expect(map.get(newest)).toBe(`v${newest}`);
    }
    expect(map.size).toBeGreaterThanOrEqual(100);
    // The dropped ones are the oldest.
    expect(map.has(0)).toBe(false);
    expect([...map].map(([key]) => key)).toEqual(Array.from({ length: map.size }, (_, i) => 1_000 - map.size + i));
  });

  it('counts a key set again as set last, kept in one generation only', () => {
    const map = new RecentMap<string, number>(3);
    map.set('a', 1).set('b', 2).set('c', 3); // a generation full: a, b, c become the older one
    map.set('a', 10);
    expect(map.size).toBe(3);
    expect(map.get('a')).toBe(10);
    map.set('d', 4).set('e', 5); // the second generation full: b and c dropped, a kept
    expect([...map]).toEqual([
      ['a', 10],
      ['d', 4],
      ['e', 5],
    ]);
  });

  it('deletes from either generation, also while iterating', () => {
    const map = new RecentMap<number, number>(2);
    map.set(1, 1).set(2, 2).set(3, 3);
    expect(map.delete(1)).toBe(true);
    expect(map.delete(3)).toBe(true);
    expect(map.delete(3)).toBe(false);
    map.set(4, 4).set(5, 5);
    for (const [key] of map) map.delete(key);
    expect(map.size).toBe(0);
    expect([...map.values()]).toEqual([]);
  });

  it('is emptied by clear()', () => {
    const map = new RecentMap<number, number>(2);
    map.set(1, 1).set(2, 2).set(3, 3);
    map.clear();
    expect(map.size).toBe(0);
    expect(map.has(1) || map.has(3)).toBe(false);
  });
});

describe('RecentSet', () => {
  it('has the bound of RecentMap, oldest members first', () => {
    const set = new RecentSet<number>(10);
    for (let i = 0; i < 95; i++) set.add(i);
    expect(set.size).toBe(15);
    expect([...set]).toEqual(Array.from({ length: 15 }, (_, i) => 80 + i));
    expect(set.has(79)).toBe(false);
    expect(set.delete(80)).toBe(true);
    expect(set.has(80)).toBe(false);
    set.clear();
    expect(set.size).toBe(0);
  });
});
