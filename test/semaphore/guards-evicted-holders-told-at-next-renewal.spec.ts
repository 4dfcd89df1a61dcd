import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { LockLostError, type Lock } from '../../lib/index.js';
import { useLockApps } from '../support/lock-app.js';
import { useRedis } from '../support/redis.js';

/**
 * Found by review (lib/core/stores/redis/lock-scripts.ts, `renew`; GUARDS in lock-lua.ts): a
 * permit's or a reader's renewal that does not find the guard keeping others out (the holder's
 * entry in the semaphore's holders hash; the `~r` value and the reader's entry) answers ELSEWHERE,
 * "not renewed, not known lost", which is right on a Cluster (a slot migrating may have moved the
 * holder's key ahead of its guards) and was read the same way on one server. There the guard is
 * gone for good (evicted, or deleted by an operator), others are let in beside the holder, and
 * the holder kept believing it held until its lease deadline, renewal after renewal, where a
 * mutex holder is told at its next renewal (the eviction warning promises no more than that).
 * Off a Cluster a missing guard now means the lock is lost: the holder is told at that renewal.
 */
describe('a guard evicted beside live holders, on one server', () => {
  const redis = useRedis();
  const app = useLockApps();

  /** The reason `lock` is lost for: 'refused' if a renewal told it, 'expired' if only its deadline did. */
  async function lossOf(lock: Lock): Promise<string> {
    if (!lock.signal.aborted) await once(lock.signal, 'abort');
    const reason = lock.signal.reason as unknown;
    expect(reason).toBeInstanceOf(LockLostError);
    return (reason as LockLostError).reason;
  }

  it('tells the holders of a semaphore whose holders hash was evicted at their next renewal', async () => {
    const { locks } = await app();
    const key = 'evicted-holders';
    const a = await locks.acquire(key, { limit: 2, ttl: 3_000 });
    const b = await locks.acquire(key, { limit: 2, ttl: 3_000 });
    await redis.del(`lock:{${key}}:holders`, `lock:{${key}}:due`);
    // The semaphore looks empty: two newcomers get in beside a and b.
    const c = await locks.acquire(key, { limit: 2, ttl: 3_000, waitTimeout: 0 });
    const d = await locks.acquire(key, { limit: 2, ttl: 3_000, waitTimeout: 0 });
    // Before: 'expired' for both, at their deadlines (every renewal answered "not known lost").
    expect(await Promise.all([lossOf(a), lossOf(b)])).toEqual(['refused', 'refused']);
    expect(c.held && d.held).toBe(true);
    await Promise.all([a, b, c, d].map((lock) => lock.release().catch(() => undefined)));
  });

  it('tells the readers of a read lock whose guards were evicted at their next renewal, not at their deadline', async () => {
    const { locks } = await app();
    const key = 'evicted-readers';
    const a = await locks.acquire(key, { mode: 'read', ttl: 3_000 });
    const b = await locks.acquire(key, { mode: 'read', ttl: 3_000 });
    await redis.del(`lock:{${key}}`, `lock:{${key}}:readers`);
    // No renewal can renew them any more (a reader's lease must not outlive its guards): before,
    // each said "not known lost" and the readers learnt it at their deadlines.
    expect(await Promise.all([lossOf(a), lossOf(b)])).toEqual(['refused', 'refused']);
    await Promise.all([a, b].map((lock) => lock.release().catch(() => undefined)));
  });
});
