import { describe, expect, it } from 'vitest';
import { useLockApps } from '../support/lock-app.js';
import { useRedis } from '../support/redis.js';

/**
 * Found by review (rv31, observability). `inspect()` reports `ttlMs: Math.max(0, pttl)`
 * (lib/core/engine/lock-manager.ts `inspectWithOwner`; the same for a semaphore holder in
 * lib/core/semaphore/semaphore-inspect.ts `holderSnapshot`). The clamp is right for PTTL -2 (the
 * key expired between the GET and the PTTL of the pipeline) but turns -1, a lock key with no
 * expiry, into 0: the one lock that will never free itself (left by a bug such as the FencedRedis
 * one fixed in 63ad19d, a PERSIST, a tool writing under the prefix) reads "0.0 s" of lease left,
 * on every refresh of the lock board, as if about to expire. An operator looking for why a key
 * stays locked is told to wait.
 */
describe('inspect() of a lock key that has no expiry', () => {
  const redis = useRedis();
  const app = useLockApps();

  it('does not report it as expiring now', async () => {
    const { locks } = await app();
    const held = await locks.acquire('stuck');
    await redis.persist('lock:{stuck}'); // the lease no longer runs out
    const inspection = await locks.inspect('stuck');
    expect(inspection.held).toBe(true);
    expect(await redis.pttl('lock:{stuck}')).toBe(-1);
    // -1, as Redis' PTTL says it: no expiry, it never frees on its own.
    expect(inspection.ttlMs).toBe(-1);
    await held.release();
  });

  it('reports a semaphore holder whose permit has no expiry the same way', async () => {
    const { locks } = await app();
    const held = await locks.acquire('stuck-sem', { limit: 2 });
    // Every key of the semaphore (its permit's, or the holders' hash of a holder alone) loses its expiry.
    const persisted: string[] = [];
    for (const key of await redis.keys('lock:{stuck-sem}*')) if ((await redis.persist(key)) === 1) persisted.push(key);
    expect(persisted.length).toBeGreaterThan(0);
    const inspection = await locks.inspect('stuck-sem');
    expect(inspection.semaphore?.holders.map((holder) => holder.ttlMs)).toEqual([-1]);
    await held.release();
  });

  it('still reports 0, not -1, for a key that has just expired', async () => {
    const { locks } = await app();
    const held = await locks.acquire('short', { ttl: 200, autoRenew: false });
    const inspection = await locks.inspect('short');
    expect(inspection.ttlMs).toBeGreaterThanOrEqual(0);
    await held.release();
  });
});
