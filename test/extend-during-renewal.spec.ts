import { describe, expect, it } from 'vitest';
import { blockRedis } from './support/block-redis.js';
import { sleep, useLockApps } from './support/lock-app.js';
import { useOwnRedis } from './support/redis.js';

describe('extend() while the watchdog renews the same lock', () => {
  const own = useOwnRedis();
  const app = useLockApps();

  it('keeps the longer lease: a renewal the watchdog sends while extend() is on its way renews to the new ttl', async () => {
    const { locks } = await app({ redis: own.url(), ttl: 1_000, renewInterval: 250 });
    const lock = await locks.acquire('extend-race');
    let renewals = 0;
    const counting = locks.events$.subscribe((event) => event.type === 'renewed' && renewals++);
    // Redis busy for 600 ms: extend()'s renewal waits, and the watchdog (every 250 ms) sends
    // its own behind it on the connection, before extend() is answered.
    const { ended } = await blockRedis(own.url(), 600);
    const before = renewals;
    await lock.extend(5_000);
    await ended;
    // Both answered (extend's and at least one of the watchdog's), in the order they were sent.
    await expect.poll(() => renewals - before).toBeGreaterThanOrEqual(2);
    counting.unsubscribe();
    expect(await own.redis().pttl('lock:{extend-race}')).toBeGreaterThan(2_000);
    // And the lock is still held well past the old ttl.
    await sleep(1_500);
    expect(lock.held).toBe(true);
    await lock.release();
  });
});
