import { describe, expect, it } from 'vitest';
import { RedisLockError } from '../../lib/index.js';
import { useQuorumAclUser } from '../support/quorum-acl-user.js';

/**
 * Found by review of a56267c. On one Redis, an extend() Redis refused for good (an ACL user
 * without EVALSHA) says the lock could not be extended, that Redis refused it, why, what to fix,
 * and that the lock is still held until its lease deadline. In quorum mode, with a majority of the
 * masters refusing so, it said "Redis did not confirm it (not enough nodes answered ...)", though
 * they had answered, with a refusal that asking again cannot change. It now says as one Redis'
 * does, the quorum's refusal in its message, the client's error its cause.
 */
describe('quorum: an extend() refused for good by a majority of the masters', () => {
  const { app: userApp, rules } = useQuorumAclUser('extender');

  it('says the masters refused it, why and what to fix, and that the lock is still held', { timeout: 30_000 }, async () => {
    const app = await userApp();
    const key = 'q-extend-refused';
    const lock = await app.locks.acquire(key, { ttl: 30_000, autoRenew: false });
    await rules([0, 1], '-evalsha', '-eval');
    const error = await lock.extend('40s').then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(RedisLockError);
    const message = (error as Error).message;
    // On main: "Lock "q-extend-refused" could not be extended: Redis did not confirm it (not enough nodes answered, ...)".
    expect(message).not.toMatch(/answered/);
    expect(message).toMatch(/^Lock "q-extend-refused" could not be extended: [\s\S]*2 of 3 Redis nodes refused it[\s\S]*NOPERM[\s\S]*ACL[\s\S]*it is still held until its lease deadline\.$/);
    expect(((error as Error).cause as Error).message).toMatch(/NOPERM/);
    expect(lock.signal.aborted).toBe(false);
  });
});
