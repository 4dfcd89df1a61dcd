import { afterEach, describe, expect, it } from 'vitest';
import { RedisLockError, type Lock } from '../../lib/index.js';
import { createLockApp, type LockApp } from '../support/lock-app.js';
import { useOwnRedis } from '../support/redis.js';
import { settledRecord } from '../support/mechanism.js';

// A release sent to a Redis that takes it but never answers (frozen by SIGSTOP here; a network cut
// that drops packets without a reset, or a server stuck in a long command, look the same): the
// client has no command timeout, so the release's reply may never come. It must still settle,
// at the latest when the lease it ends would have run out, so that `finally { await
// lock.release() }`, `using()` and a `@Locked` route do not hang for as long as Redis is gone.
// Its own server, since it is frozen.
describe('a release Redis does not answer', () => {
  const own = useOwnRedis();
  let app: LockApp | undefined;
  afterEach(async () => {
    own.server().resume();
    await app?.close();
    app = undefined;
  });


  async function frozenWhileHeld(ttl: number): Promise<Lock> {
    app = await createLockApp({ redis: own.url(), ttl });
    const lock = await app.locks.acquire('frozen:<b>');
    own.server().pause();
    return lock;
  }

  it('release() of a held lock rejects with a RedisLockError by the end of its lease, while Redis is still frozen', async () => {
    const lock = await frozenWhileHeld(600);
    const release = settledRecord(lock.release());
    await expect.poll(() => release.settled, { timeout: 5_000 }).toBeDefined();
    expect(release.settled!.error).toBeInstanceOf(RedisLockError);
    expect(String((release.settled!.error as Error).message)).toContain('"frozen:<b>"');
    expect(String((release.settled!.error as Error).message)).toContain('did not answer the release');
    expect(lock.held).toBe(false);
    own.server().resume();
    // Nothing left once Redis is back: the lease ran out (or the release, sent again, ran).
    await expect.poll(() => own.redis().exists('lock:{frozen:<b>}'), { timeout: 5_000 }).toBe(0);
  });

  it('using() returns what its function returned, by the end of the lease, while Redis is still frozen', async () => {
    app = await createLockApp({ redis: own.url(), ttl: 600 });
    const call = settledRecord(
      app.locks.using('frozen:using', async () => {
        own.server().pause();
        return 'done';
      }),
    );
    await expect.poll(() => call.settled, { timeout: 5_000 }).toBeDefined();
    expect(call.settled).toEqual({ value: 'done' });
    expect(app.logs.has('warn', 'frozen:using') || app.logs.has('error', 'frozen:using')).toBe(true);
  });

  it('release() of a lock already lost to its lease running out settles while Redis is still frozen', async () => {
    const lock = await frozenWhileHeld(400);
    // The lease runs out locally (Redis answers no renewal): the holder is told.
    await expect.poll(() => lock.signal.aborted, { timeout: 5_000 }).toBe(true);
    const release = settledRecord(lock.release());
    await expect.poll(() => release.settled, { timeout: 5_000 }).toBeDefined();
    expect(lock.held).toBe(false);
  });

  const kinds: [string, (app: LockApp) => Promise<Lock>][] = [
    ['semaphore permits', (app) => app.locks.acquire('frozen:sem', { limit: 3 })],
    ['a read lock', (app) => app.locks.acquire('frozen:read', { mode: 'read' })],
    ['a multi-key lock', (app) => app.locks.acquire(['frozen:a', 'frozen:b'])],
  ];

  // Each released through its own store (permits, readers) or one release per part.
  it.each(kinds)('%s: release() rejects with a RedisLockError by the end of the lease', async (_name, take) => {
    app = await createLockApp({ redis: own.url(), ttl: 600 });
    const lock = await take(app);
    own.server().pause();
    const release = settledRecord(lock.release());
    await expect.poll(() => release.settled, { timeout: 5_000 }).toBeDefined();
    expect(release.settled!.error).toBeInstanceOf(RedisLockError);
    expect(lock.held).toBe(false);
  });
});
