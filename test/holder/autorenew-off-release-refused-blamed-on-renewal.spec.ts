import { Logger } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LockLostError, LockService, RedisLockModule } from '../../lib/index.js';
import { redisUrl, useRedis } from '../support/redis.js';

/**
 * Found by review of cf42f53 ("A lock taken with autoRenew: false [...] is no longer reported as
 * lost during renewal": nothing renews such a lock, and an operator went looking for an outage).
 * The same misreport is still reached through the other loss reason, `refused`: a lock taken
 * with `autoRenew: false` whose key was deleted (a release by force from the lock board, an
 * operator's DEL) is found gone by its holder's release(); the LockLostError says "Redis refused
 * the renewal because the lock is no longer held by this owner" and the error log line repeats
 * it, although no renewal was ever sent: it was the release that found the lock gone.
 */
describe('a lock taken with autoRenew: false, deleted in Redis, then released by its holder', () => {
  const redis = useRedis();
  afterEach(() => vi.restoreAllMocks());

  it('is reported lost without blaming a renewal that never happened', async () => {
    const logged: string[] = [];
    vi.spyOn(Logger.prototype, 'error').mockImplementation((message: unknown) => void logged.push(String(message)));
    const moduleRef = await Test.createTestingModule({ imports: [RedisLockModule.forRoot({ redis: redisUrl() })] }).compile();
    await moduleRef.init();
    try {
      const lock = await moduleRef.get(LockService).acquire('account:forced', { ttl: 60_000, autoRenew: false });
      // Released by force (the board's owner-blind delete, or an operator's DEL).
      expect(await redis.del('lock:{account:forced}')).toBe(1);
      await lock.release();
      const reason = lock.signal.reason as LockLostError;
      expect(reason).toBeInstanceOf(LockLostError);
      expect(reason.reason).toBe('refused');
      // Before: "... was lost: Redis refused the renewal because the lock is no longer held by this owner."
      expect(reason.message).not.toMatch(/renewal/);
      const line = logged.find((text) => text.includes('account:forced'));
      expect(line).toBeDefined();
      expect(line).not.toMatch(/renewal/);
    } finally {
      await moduleRef.close();
    }
  });
});
