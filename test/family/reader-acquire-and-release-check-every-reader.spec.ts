/**
 * Found by review (thirty-eighth session). A read lock's scripts ask whether any of its readers is
 * still there (`readers_alive` in queue-lua.ts: they may all have crashed) on every reader's
 * acquire while readers hold it, on every reader's release, and on every writer's attempt (which
 * a waiting writer repeats every 250 ms). They answered it with one `EXISTS` per reader of the
 * hash, all of them, although only "none left" mattered: with N readers overlapping, each new
 * reader and each release cost Redis N key lookups inside one script (Redis serves nothing else
 * meanwhile), N overlapping readers O(N^2) in all. The check now stops at the first live reader
 * (dropping the dead entries it meets before it), and the in-memory store does the same. Counted
 * in Redis' own command statistics: the lookups one more reader costs do not grow with the
 * readers already holding.
 */
import { describe, expect, it } from 'vitest';
import type { Lock } from '../../lib/index.js';
import { createLockApp } from '../support/lock-app.js';
import { useOwnRedis } from '../support/redis.js';

describe('a read lock held by many readers', () => {
  // Redis' command statistics are the server's: a server of this file's own.
  const own = useOwnRedis();

  /** EXISTS calls Redis ran (inside scripts too) for `work`. */
  async function existsCalls(work: () => Promise<unknown>): Promise<number> {
    await own.redis().config('RESETSTAT');
    await work();
    const stats = await own.redis().info('commandstats');
    return Number(/cmdstat_exists:calls=(\d+)/.exec(stats)?.[1] ?? 0);
  }

  it('costs one more reader, and a writer looking at it, as much with 60 readers as with 5', async () => {
    const app = await createLockApp({ redis: own.url(), ttl: 30_000 });
    const held: Lock[] = [];
    try {
      const key = 'many-readers';
      const costs: Record<number, { reader: number; writer: number }> = {};
      for (const readers of [5, 60]) {
        while (held.length < readers) held.push(await app.locks.acquire(key, { mode: 'read' }));
        costs[readers] = {
          reader: await existsCalls(async () => (await app.locks.acquire(key, { mode: 'read' })).release()),
          writer: await existsCalls(() => app.locks.tryAcquire(key)),
        };
      }
      // Failed before the fix: { 5: { reader: 13, writer: 6 }, 60: { reader: 123, writer: 61 } }.
      expect(costs[60]).toEqual(costs[5]);
    } finally {
      await Promise.all(held.map((lock) => lock.release()));
      await app.close();
    }
  });
});
