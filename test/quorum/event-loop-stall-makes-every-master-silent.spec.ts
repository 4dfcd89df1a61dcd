import { describe, expect, it } from 'vitest';
import { createLockApp } from '../support/lock-app.js';
import { useQuorumServers } from '../support/quorum-nodes.js';

/**
 * Found by review of the day's fixes (twenty-ninth session): QuorumSilence calls a master silent when it has commands out and
 * no answer was *read* for a second. After a stall of the application's own event loop (a long
 * GC pause, a synchronous CPU burst of a request handler), every master that had a command out
 * has answered long ago, its reply waiting unread in the socket, yet the first round asked
 * before the loop polls for I/O (a timer's renewal, a call made at the end of the burst) refuses
 * every such master at once: the call fails "Quorum not reached ... not asked" with three healthy
 * masters. QuorumRound.expire() defers its verdict past the next I/O poll for exactly this
 * reason; the silence verdict does not.
 */
describe('quorum: a stall of the application event loop', () => {
  const servers = useQuorumServers();

  it('does not make healthy masters silent: a lock asked for right after it is granted', { timeout: 30_000 }, async () => {
    const app = await createLockApp({ redis: servers.map((server) => server.url), ttl: 5_000 });
    try {
      // A command out on every master (another request's lock), then a synchronous burst of 1.2 s.
      const other = app.locks.acquire('other');
      const until = performance.now() + 1_200;
      while (performance.now() < until) {
        // busy: the event loop does not read the masters' replies meanwhile
      }
      const after = app.locks.tryAcquire('after');
      const [lock, otherLock] = await Promise.all([after, other]);
      expect(lock).not.toBeNull();
      await lock?.release();
      await otherLock.release();
    } finally {
      await app.close();
    }
  });

  it('does not fail a release asked for right after it, leaving the lock held for its ttl', { timeout: 30_000 }, async () => {
    const app = await createLockApp({ redis: servers.map((server) => server.url), ttl: 5_000 });
    try {
      const lock = await app.locks.acquire('held');
      const other = app.locks.acquire('other');
      const until = performance.now() + 1_200;
      while (performance.now() < until) {
        // busy
      }
      const released = lock.release();
      released.catch(() => undefined);
      await (await other).release();
      await expect(released).resolves.not.toThrow();
      expect(await app.locks.isLocked('held')).toBe(false);
    } finally {
      await app.close();
    }
  });
});
