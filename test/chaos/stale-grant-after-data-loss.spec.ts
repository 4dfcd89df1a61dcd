import { afterEach, describe, expect, it } from 'vitest';
import { createLockApp, sleep, type LockApp } from '../support/lock-app.js';
import { subscribers, useOwnRedis } from '../support/redis.js';
import { ChaosWorker } from './support/chaos-worker.js';

// Found by the real-Redis explorer (seed 491271: a read-write lock on a Cluster whose master
// restarted empty while a worker was paused). A release handed the lock to a waiter whose process
// was frozen; Redis then lost its data, and someone else took the lock. On thawing, the waiter's
// overdue refresh went out first and its grant's message came in while that attempt was in
// flight; the busy reply's fencing counter, restarted with the data, stood below the grant's
// token, so the grant passed for one made after the attempt, and its lease was counted from
// there: the waiter ran its code beside the new holder. The busy reply now says that it queued
// the waiter anew, and a waiter whose place was lost confirms a grant with an attempt first.
// A counter Redis lost starts again at the server's clock (above the stale grant's token); one
// restored from an older snapshot does not, and that is the loss this spec plays.
describe('chaos: a grant made before Redis lost its data', () => {
  const own = useOwnRedis();
  let holder: LockApp | undefined;
  let waiter: ChaosWorker | undefined;
  afterEach(async () => {
    waiter?.child.kill('SIGCONT');
    waiter?.child.kill('SIGKILL');
    await holder?.close();
    holder = waiter = undefined;
  });

  it('is not taken by a waiter that thaws after the loss: it waits for the new holder and gets a token of the new counter', { timeout: 30_000 }, async () => {
    const redis = own.redis();
    holder = await createLockApp({ redis: own.url() });
    await redis.set('lock:{lost}:fence', '10'); // the key was locked ten times before
    const first = await holder.locks.acquire('lost', { ttl: 10_000 });
    expect(first.fencingToken).toBe(11);
    waiter = ChaosWorker.start({ REDIS_URL: own.url(), MODE: 'wait', KEY: 'lost', TTL: 600, WAIT: 20_000 }, 'wait');
    // Queued and subscribed; its attempt after subscribing answered (a refresh is 200 ms at most).
    await expect.poll(() => redis.zcard('lock:{lost}:waiters'), { timeout: 10_000 }).toBe(1);
    await expect.poll(() => subscribers(redis, 'lock:{lost}:released'), { timeout: 10_000 }).toBe(1);
    await sleep(300);

    waiter.child.kill('SIGSTOP');
    // The release hands the lock to the frozen waiter (token 12); its message waits in its socket.
    await first.release();
    expect(await redis.get('lock:{lost}:fence')).toBe('12');
    // Redis restarts from a snapshot taken before these two locks (the counter back at 10), and
    // another process takes the lock (a foreign owner, without expiry).
    await redis.flushall();
    await redis.set('lock:{lost}:fence', '10');
    await redis.set('lock:{lost}', 'new-holder');
    // Past the grant's lease (600 ms): its refresh timer is overdue when it thaws, and fires first.
    await sleep(1_000);
    waiter.child.kill('SIGCONT');

    let deletedAt: number | undefined;
    const acquired = waiter.next<{ acquired: number }>('acquired').then((line) => ({ ...line, afterDelete: deletedAt !== undefined }));
    // Given a dozen refreshes to go wrong, the waiter must still be waiting behind the new holder.
    await sleep(2_500);
    expect(waiter.lines).toEqual([]);
    deletedAt = Date.now();
    await redis.del('lock:{lost}');
    // Its next refresh finds the lock free: a token of the counter rolled back, not the stale grant's 12.
    expect(await acquired).toMatchObject({ acquired: 11, afterDelete: true });
  });
});
