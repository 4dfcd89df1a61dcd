/**
 * Review of 8cc0308 (no `renewed` before `acquired`): the new `handedOut` check must silence
 * only renewals before the hand-out. A lock acquired at once, and one handed over to a waiter
 * (renewed a third into its grant lease, after its hand-out), must emit `renewed` for every
 * watchdog renewal and for extend(), after their `acquired`.
 */
import { describe, expect, it } from 'vitest';
import type { LockEvent } from '../../lib/index.js';
import { useLockApps } from '../support/lock-app.js';
import { useRedis } from '../support/redis.js';

describe('renewed events of handed-out locks', () => {
  useRedis();
  const apps = useLockApps();

  it('a lock acquired at once: every renewal and extend() emit renewed', async () => {
    const app = await apps({ ttl: 600 });
    const events: LockEvent[] = [];
    app.locks.events$.subscribe((event) => events.push(event));
    const lock = await app.locks.acquire('renew:direct');
    await expect.poll(() => events.filter((event) => event.type === 'renewed').length, { timeout: 5_000 }).toBeGreaterThanOrEqual(3);
    const before = events.filter((event) => event.type === 'renewed').length;
    await lock.extend();
    expect(events.filter((event) => event.type === 'renewed').length).toBeGreaterThan(before);
    await lock.release();
    expect(events[0]!.type).toBe('acquired');
  });

  it('a lock handed over to a waiter: its first renewal and the watchdog\'s emit renewed, after acquired', async () => {
    const holder = await apps({ ttl: '30s' });
    const app = await apps({ ttl: '3s' });
    const events: LockEvent[] = [];
    app.locks.events$.subscribe((event) => {
      if (event.key === 'renew:handed') events.push(event);
    });
    const held = await holder.locks.acquire('renew:handed');
    const waiting = app.locks.acquire('renew:handed', { waitTimeout: '10s' });
    await expect.poll(() => events.some((event) => event.type === 'waiting'), { timeout: 5_000 }).toBe(true);
    await held.release();
    const lock = await waiting;
    // The first renewal (a third into the 1 s grant lease), then the watchdog's (every 1 s).
    await expect.poll(() => events.filter((event) => event.type === 'renewed').length, { timeout: 5_000 }).toBeGreaterThanOrEqual(2);
    const types = events.map((event) => event.type).filter((type) => type === 'acquired' || type === 'renewed');
    expect(types[0]).toBe('acquired');
    await lock.release();
  });
});
