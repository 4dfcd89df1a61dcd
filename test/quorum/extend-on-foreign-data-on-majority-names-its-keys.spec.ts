import { describe, expect, it } from 'vitest';
import { RedisLockError } from '../../lib/index.js';
import { useQuorumNodes } from '../support/quorum-nodes.js';

/**
 * Found by review of e00831aa (foreign data at the quorum scripts' keys). On one Redis, an extend()
 * of a lock whose key became data of another kind (a hash written by something else) says the lock
 * could not be extended, that a key of it holds data this library did not write, what to fix, and
 * that it is still held until its lease deadline. Since e00831aa a quorum's acquire, tryAcquire,
 * isLocked, inspect and release name both keys and the remedy when a majority of the masters refuse
 * so; extend() said only "Redis did not confirm it (not enough nodes answered, ...)", though every
 * master had answered, two of them with WRONGTYPE.
 */
describe('quorum: extend() of a lock whose key holds a hash on a majority of the masters', () => {
  const { app, admin } = useQuorumNodes();

  it('names both keys and the remedy, and says the lock is still held until its lease deadline', { timeout: 30_000 }, async () => {
    const { locks } = await app({ ttl: 30_000 });
    const key = 'q-foreign-extend';
    const lock = await locks.acquire(key, { autoRenew: false });
    try {
      for (const i of [0, 1]) await admin(i, (node) => node.del(`lock:{${key}}`).then(() => node.hset(`lock:{${key}}`, 'f', '1')));
      const error = await lock.extend('40s').then(
        () => new Error('extended'),
        (caught: unknown) => caught as Error,
      );
      // On main: "Lock "q-foreign-extend" could not be extended: Redis did not confirm it (not enough nodes answered, ...)".
      expect(error.message).not.toMatch(/did not confirm/);
      expect(error.message).toMatch(/^Lock "q-foreign-extend" could not be extended: [\s\S]*"lock:\{q-foreign-extend\}" and "lock:\{q-foreign-extend\}:fence"[\s\S]*delete that key[\s\S]*keyPrefix of its own[\s\S]*WRONGTYPE[\s\S]*it is still held until its lease deadline\.$/);
      expect(error).toBeInstanceOf(RedisLockError);
      expect((error.cause as Error).message).toMatch(/WRONGTYPE/);
      expect(lock.signal.aborted).toBe(false);
    } finally {
      await lock.release().catch(() => undefined);
      for (const i of [0, 1]) await admin(i, (node) => node.del(`lock:{${key}}`));
    }
  });
});
