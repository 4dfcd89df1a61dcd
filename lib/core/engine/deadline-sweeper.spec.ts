import { describe, expect, it } from 'vitest';
import { now } from '../time/clock.js';
import { DeadlineSweeper, type Expiring } from './deadline-sweeper.js';

function item(deadline: number, expired: string[], name: string): Expiring & { deadline: number } {
  return { deadline, sweepIndex: -1, expire: () => expired.push(name) };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('DeadlineSweeper', () => {
  it('expires items in deadline order with one timer, skipping untracked ones', async () => {
    const sweeper = new DeadlineSweeper();
    const expired: string[] = [];
    const start = now();
    const items = [item(start + 60, expired, 'c'), item(start + 20, expired, 'a'), item(start + 40, expired, 'b'), item(start + 30, expired, 'gone')];
    for (const entry of items) sweeper.track(entry);
    sweeper.untrack(items[3]!);
    await sleep(100);
    expect(expired).toEqual(['a', 'b', 'c']);
    expect(items.every((entry) => entry.sweepIndex === -1)).toBe(true);
  });

  it('follows a deadline that moves later or earlier', async () => {
    const sweeper = new DeadlineSweeper();
    const expired: string[] = [];
    const start = now();
    const later = item(start + 20, expired, 'moved-later');
    const earlier = item(start + 200, expired, 'moved-earlier');
    sweeper.track(later);
    sweeper.track(earlier);
    later.deadline = start + 150;
    sweeper.track(later);
    earlier.deadline = start + 30;
    sweeper.track(earlier);
    await sleep(80);
    expect(expired).toEqual(['moved-earlier']);
    await sleep(120);
    expect(expired).toEqual(['moved-earlier', 'moved-later']);
  });

  it('keeps a heap of thousands consistent under random moves and removals', () => {
    const sweeper = new DeadlineSweeper();
    const expired: string[] = [];
    const items = Array.from({ length: 2_000 }, (_, i) => item(now() + 10_000 + Math.random() * 10_000, expired, String(i)));
    for (const entry of items) sweeper.track(entry);
    for (let i = 0; i < 3_000; i++) {
      const entry = items[Math.floor(Math.random() * items.length)]!;
      if (Math.random() < 0.3) sweeper.untrack(entry);
      else {
        entry.deadline = now() + 10_000 + Math.random() * 10_000;
        sweeper.track(entry);
      }
    }
    const heap = (sweeper as unknown as { heap: Expiring[] }).heap;
    heap.forEach((entry, i) => {
      expect(entry.sweepIndex).toBe(i);
      if (i > 0) expect(heap[(i - 1) >> 1]!.deadline).toBeLessThanOrEqual(entry.deadline);
    });
    sweeper.close();
    expect(expired).toEqual([]);
  });
});

describe('DeadlineSweeper with a deadline past the timer limit', () => {
  it('never arms a timer above 2^31 - 1 ms, and expires nothing early', async () => {
    const { vi } = await import('vitest');
    const { MAX_TIMER_MS } = await import('../options/lock-options.js');
    const spy = vi.spyOn(globalThis, 'setTimeout');
    try {
      const sweeper = new DeadlineSweeper();
      const expired: string[] = [];
      sweeper.track(item(now() + 30 * 86_400_000, expired, 'month'));
      const delays = spy.mock.calls.map(([, ms]) => ms as number);
      expect(delays.length).toBeGreaterThan(0);
      expect(delays.every((ms) => ms <= MAX_TIMER_MS)).toBe(true);
      await sleep(20);
      expect(expired).toEqual([]);
      sweeper.close();
    } finally {
      spy.mockRestore();
    }
  });
});
