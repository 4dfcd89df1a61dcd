import { describe, expect, it } from 'vitest';
import { LockNotAcquiredError, LockUpgradeError } from '../../lib/index.js';
import { useLockApps } from '../support/lock-app.js';
import { useRedis } from '../support/redis.js';

/**
 * Found by review (rev-s14f): docs/lock-family.md ("Read-write locks", Reentrancy) says "a chain
 * holding the read lock that asks for the write lock fails at once with `LockUpgradeError`", and
 * that read locks combine with multi-key locks. `acquireAll` (lib/core/multi-key/acquire-all.ts)
 * takes the keys one after another and only meets the upgrade when it reaches the key the chain
 * reads (`LockManager.reenter`): a key list whose upgraded key sorts after a busy one first waits
 * for that key, for the whole `waitTimeout` if it stays busy, and then fails with
 * `LockNotAcquiredError` naming the other key (a 409 from the interceptor, "try again later"),
 * never with the `LockUpgradeError` that says what is wrong. When the busy key does come free it
 * is taken (its waiters held back meanwhile) and given back, only to fail then.
 */
describe('a chain holding the read lock of a key that asks for a key list including it', () => {
  useRedis();
  const app = useLockApps();

  it('fails at once with LockUpgradeError, whatever the other keys', async () => {
    const other = await app();
    const { locks } = await app({ ttl: 30_000 });
    // "account:a" sorts before "account:b" and is busy for the whole test.
    const busy = await other.locks.acquire('account:a');

    const single = await locks.using('account:b', () => locks.acquire('account:b').catch((error: unknown) => error), { mode: 'read' });
    expect(single).toBeInstanceOf(LockUpgradeError);

    const listed = await locks.using('account:b', () => locks.acquire(['account:a', 'account:b'], { waitTimeout: 1_500 }).catch((error: unknown) => error), { mode: 'read' });
    await busy.release();
    expect(listed).not.toBeInstanceOf(LockNotAcquiredError);
    expect(listed).toBeInstanceOf(LockUpgradeError);
  });
});
