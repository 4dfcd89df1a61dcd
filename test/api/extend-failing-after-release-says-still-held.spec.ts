import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { RedisLockError } from '../../lib/index.js';
import { useAclUser } from '../support/acl-user.js';
import { useLockApps } from '../support/lock-app.js';
import { useOwnRedis } from '../support/redis.js';
import { COMMANDS } from '../../lib/core/stores/redis/lock-lua.js';

/**
 * Found by review (forty-second session). `extend()` whose renewal the client failed (a refused
 * command, a connection closed) rejected with "could not be extended (...); it is still held until
 * its lease deadline", also when the holder had released the lock while the extension was on its
 * way and Redis had confirmed that release: the message told the caller to count on a lock that
 * was gone (`held` false, the key deleted). Here the renewal's script is not on the server and
 * the user may not send EVAL (ioredis falls back to it on NOSCRIPT), while the release's script is
 * loaded: the release is confirmed, then the extension fails with NOPERM.
 */
describe('extend() whose renewal fails after the release it was overtaken by', () => {
  const own = useOwnRedis();
  const app = useLockApps();
  const user = useAclUser(own, 'review-extend-released');

  it('says the lock was released while the extension waited, not that it is still held', async () => {
    const { locks } = await app({ redis: user.url(), ttl: 30_000 });
    const admin = own.redis();
    await admin.script('FLUSH');
    // Loads the acquire and release scripts; no renewal runs within the 30 s lease.
    await (await locks.acquire('warm-up')).release();
    expect(await admin.script('EXISTS', createHash('sha1').update(COMMANDS.renew.lua).digest('hex'))).toEqual([0]);
    const lock = await locks.acquire('extend-after-release');
    await user.rules('-eval');
    const extending = lock.extend().then(
      () => undefined,
      (caught: unknown) => caught as Error,
    );
    await lock.release();
    const error = await extending;
    expect(await own.redis().exists('lock:{extend-after-release}')).toBe(0);
    expect(error).toBeInstanceOf(RedisLockError);
    expect(error?.message).not.toContain('still held');
    expect(error?.message).toBe('Lock "extend-after-release" was released while extend() waited for its answer: the extension no longer applies.');
    expect(lock.held).toBe(false);
  });
});
