/**
 * Found by review of the multi-key layer. A lock whose key is gone from Redis when its holder
 * releases it (deleted, evicted, released by force from the board, between two renewals) was
 * lost, not released: a single key's `release()` finds it so, aborts the lock's `signal`, emits
 * `lost` (reason `refused`), and the lock metrics count it in `lock.lost`, as the health check's
 * `locksLostRecently` does. A multi-key lock one of whose keys was found gone so by its
 * `release()` was told to the metrics as released (MULTI_KEY_LOCK_CHANNEL), its `lock.lost`
 * never counted, while the health check counted the loss: `MultiLock.release()` stopped watching
 * its parts before releasing them. It is now told lost, as one key's lock is.
 */
import { describe, expect, it } from 'vitest';
import { LockLostError } from '../../lib/index.js';
import { useLockApps } from '../support/lock-app.js';
import { useLockMetrics } from '../support/lock-metrics.js';
import { useRedis } from '../support/redis.js';

describe('lock metrics of a lock whose key is found gone by its release', () => {
  const redis = useRedis();
  const app = useLockApps();
  const lockMetrics = useLockMetrics();
  const losses = async (name: string): Promise<[unknown, number][]> =>
    (await lockMetrics.points('lock.lost')).filter((point) => point.attributes['lock.name'] === name).map((point) => [point.attributes['lock.lost.reason'], point.value]);
  const active = async (name: string): Promise<number> => (await lockMetrics.points('lock.active')).find((point) => point.attributes['lock.name'] === name)?.value ?? 0;

  it('counts one loss (refused), for a multi-key lock as for one key', async () => {
    lockMetrics.enable();
    const { locks } = await app();

    // One key: its release finds it gone, and it is lost.
    const one = await locks.acquire('gone:one', { name: 'one' });
    await redis.del('lock:{gone:one}');
    await one.release();
    expect((one.signal.reason as LockLostError).reason).toBe('refused');
    expect(await losses('one')).toEqual([['refused', 1]]);
    expect(await active('one')).toBe(0);

    // Two keys, the second gone when the lock is released: one loss, as for one key.
    const pair = await locks.acquire(['gone:a', 'gone:b'], { name: 'pair' });
    await redis.del('lock:{gone:b}');
    await pair.release();
    expect(await losses('pair')).toEqual([['refused', 1]]);
    expect(await active('pair')).toBe(0);
  });
});
