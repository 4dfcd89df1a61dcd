/**
 * docs/locks.md, `release()`: "A release Redis did not answer (... or no answer by the end of
 * the lease, as from a frozen server or a network cut that resets nothing, since the client has
 * no command timeout) rejects with a `RedisLockError`". HeldLock.releasing's TSDoc: the deadline
 * sweeper bounds it, because "a frozen Redis ... would otherwise leave `release()`, `using()`
 * and every `@Locked` call waiting for as long as Redis is gone". docs/configuration.md: "a
 * client you hand in ... is used as it is and never closed by the module".
 *
 * Found by review: `app.close()` closed the deadline sweeper (LockManager.close), the only
 * bound on a release in flight. With the module's own connection that does not matter (closing
 * it rejects the command); with a client the application handed in, nothing closes it, and a
 * release that was waiting for a frozen Redis when the application closed stayed pending past the
 * end of its lease, for as long as Redis was frozen. A release still unanswered when shutdown ends
 * now ends with it (a `RedisLockError`, as at the end of its lease).
 */
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { createLockApp, sleep, type LockApp } from '../support/lock-app.js';
import { useOwnRedis } from '../support/redis.js';

describe('a release waiting for a frozen Redis when the application closes (handed-in client)', () => {
  const own = useOwnRedis();
  let client: Redis | undefined;
  let app: LockApp | undefined;
  afterEach(async () => {
    own.server().resume();
    await app?.close().catch(() => undefined);
    client?.disconnect();
    app = client = undefined;
  });

  it('settles when the shutdown ends', { timeout: 20_000 }, async () => {
    client = new Redis(own.url());
    client.on('error', () => undefined);
    await client.ping();
    app = await createLockApp({ redis: client, ttl: '30s', shutdownTimeout: '500ms' });
    const lock = await app.locks.acquire('rb:handed');
    own.server().pause();
    const release: { settled?: string } = {};
    lock.release().then(
      () => (release.settled = 'resolved'),
      (error: Error) => (release.settled = `${error.name}: ${error.message}`),
    );
    await app.close();
    // Ended with the shutdown, long before the lease (30 s): the close's own step bounds it.
    await sleep(50);
    expect(release.settled ?? 'still pending').toMatch(/^RedisUnansweredError: Redis did not answer the release of lock "rb:handed" before the application's shutdown ended/);
  });
});
