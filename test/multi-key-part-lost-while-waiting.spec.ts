import { describe, expect, it } from 'vitest';
import { nextEvent, useLockApps } from './support/lock-app.js';
import { useRedis } from './support/redis.js';

/**
 * Found by review: `acquire([...keys])` is documented as "all of them, or none" (LockService JSDoc,
 * docs/lock-family.md "All or nothing"). `acquireAll` (lib/core/multi-key/acquire-all.ts) takes
 * the keys one after another and, once the last one is in, wraps whatever it holds in a
 * `MultiLock` without looking at the earlier parts: a part lost while the call waited for a
 * later key (its renewal refused: eviction, a failover, a FLUSHDB, an operator's force-release)
 * was handed out inside a lock whose `held` is false and whose `signal` was already aborted.
 * Now everything is given back and taken again in order, within the same wait.
 */
describe('a key lost while a multi-key acquisition waits for a later key', () => {
  const redis = useRedis();
  const app = useLockApps();

  it('does not resolve acquire() with a lock that is not held', async () => {
    const holder = await app();
    const { locks } = await app({ ttl: 600, renewInterval: 100, waitTimeout: 10_000 });
    const b = await holder.locks.acquire('acct:b');
    const lostA = nextEvent(locks.events$, 'lost');
    const pending = locks.acquire(['acct:a', 'acct:b']);
    while ((await holder.locks.inspect('acct:b')).waiters < 1) await new Promise((resolve) => setTimeout(resolve, 10));
    // acct:a is taken and renewed; the caller queues on acct:b. acct:a goes away behind its back:
    await redis.del('lock:{acct:a}');
    expect((await lostA).key).toBe('acct:a');
    await b.release(); // acct:b is handed to the waiting caller
    const outcome = await pending.then(
      async (lock) => {
        const state = { held: lock.held, aborted: lock.signal.aborted };
        await lock.release();
        return state;
      },
      (error: unknown) => (error as Error).constructor.name,
    );
    // Both keys taken again, in order: a held lock.
    expect(outcome).toEqual({ held: true, aborted: false });
    expect(await locks.isLocked('acct:b')).toBe(false);
  });
});
