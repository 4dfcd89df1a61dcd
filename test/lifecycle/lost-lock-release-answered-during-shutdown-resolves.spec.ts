/**
 * Found by review of 23e0928 ("shutdown also ends the release of a lock lost before the close").
 *
 * Promised (docs/configuration.md): shutdown gives Redis `shutdownTimeout`; "a release Redis has
 * still not answered THEN (a frozen server) ends with it" with a `RedisLockError`. docs/locks.md
 * `release()`: it rejects with a `RedisLockError` only when Redis did not answer it.
 *
 * What happened: `LockManager.giveBackAll` never WAITED for the releases it keeps in
 * `lostReleasing` (they are not in `pendingCleanups`, unlike a held lock's release, which
 * `lock.shutdown()` waits for): with nothing else pending, its wait loop does not even run, and
 * the `for (const lock of this.lostReleasing) lock.endReleaseAtShutdown()` at its end fails a
 * lost lock's release sent a moment before the close at once, with "Redis did not answer the
 * release ... before the application's shutdown ended", though Redis answers it well within
 * `shutdownTimeout` (busy for 300 ms here, `shutdownTimeout` 3 s). Every @Locked / using() call
 * whose lock was lost and which was releasing it when the app began to close gets that spurious
 * error. The control (the same with a lock still held) resolves: its release is waited for. Now
 * shutdown waits for those releases too, within `shutdownTimeout`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createLockApp, sleep, type LockApp } from '../support/lock-app.js';
import { useOwnRedis } from '../support/redis.js';
import { blockRedis } from '../support/block-redis.js';

describe('the release of a lost lock in flight when the application closes, on a Redis busy for 300 ms', () => {
  const own = useOwnRedis();
  let app: LockApp | undefined;
  afterEach(async () => {
    await app?.close().catch(() => undefined);
    app = undefined;
  });

  async function releaseThenClose(lose: boolean): Promise<{ settled: string; afterMs: number; freeAfterMs: number }> {
    app = await createLockApp({ redis: own.url(), ttl: '30s', shutdownTimeout: '3s' });
    const lock = await app.locks.acquire(lose ? 'rv:lost' : 'rv:held');
    if (lose) {
      await own.redis().del('lock:{rv:lost}');
      const extended = await lock.extend().then(
        () => 'extended',
        (error: Error & { reason?: string }) => `${error.name} ${error.reason}`,
      );
      expect(extended).toBe('LockLostError refused');
    }
    const { ended } = await blockRedis(own.url(), 300);
    const startedAt = Date.now();
    const release = lock.release().then(
      () => 'resolved',
      (error: Error) => `${error.name}: ${error.message}`,
    );
    const closed = app.close();
    const settled = await release;
    const afterMs = Date.now() - startedAt;
    await closed;
    app = undefined;
    const freeAt = await ended;
    return { settled, afterMs, freeAfterMs: (freeAt ?? 0) - startedAt };
  }

  it('(control) a held lock: its release() resolves once Redis answers', { timeout: 15_000 }, async () => {
    const outcome = await releaseThenClose(false);
    expect(outcome.settled).toBe('resolved');
  });

  it('a lost lock: its release() resolves once Redis answers, within shutdownTimeout', { timeout: 15_000 }, async () => {
    const outcome = await releaseThenClose(true);
    await sleep(50);
    expect(outcome, `Redis was free again ${outcome.freeAfterMs} ms after release(); shutdownTimeout 3 s`).toMatchObject({ settled: 'resolved' });
  });
});
