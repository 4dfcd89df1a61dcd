import { afterEach, describe, expect, it } from 'vitest';
import { LockLostError, RedisLockError } from '../../lib/index.js';
import { createLockApp, type LockApp } from '../support/lock-app.js';
import { useOwnRedis } from '../support/redis.js';

// Found by the simulation's frozen connections (explore/, docs/explorer.md: a reply that never
// comes): an `extend()` sent to a Redis that takes it but never answers (frozen by SIGSTOP here;
// a network cut that resets nothing looks the same, and the client has no command timeout) never
// settles. The lease runs out meanwhile and the lock's signal aborts with `expired`, but
// `await lock.extend()` waits for as long as Redis is gone, and a `using()` whose function awaits
// it with it. A release is bounded by the end of its lease (release-frozen-redis.spec.ts); an
// extension now is too: it rejects with the lock's loss once the lease ran out.
describe('an extend() Redis does not answer', () => {
  const own = useOwnRedis();
  let app: LockApp | undefined;
  afterEach(async () => {
    own.server().resume();
    await app?.close();
    app = undefined;
  });

  it('settles (rejects with the loss) by the end of its lease, while Redis is still frozen', async () => {
    app = await createLockApp({ redis: own.url(), ttl: 600 });
    const lock = await app.locks.acquire('frozen:extend');
    own.server().pause();
    let settled: { error?: unknown } | undefined;
    lock.extend().then(
      () => (settled = {}),
      (error: unknown) => (settled = { error }),
    );
    // The lease runs out locally (no reply to the extension, nor to any renewal): the holder is told.
    await expect.poll(() => lock.signal.aborted, { timeout: 5_000 }).toBe(true);
    // ... and the extension with it, though Redis is still frozen.
    await expect.poll(() => settled, { timeout: 3_000 }).toBeDefined();
    expect(settled!.error).toBeInstanceOf(LockLostError);
    expect(settled!.error).toMatchObject({ reason: 'expired' });
  });

  it('settles when the lock is released meanwhile and neither is answered', async () => {
    app = await createLockApp({ redis: own.url(), ttl: 600 });
    const lock = await app.locks.acquire('frozen:extend-release');
    own.server().pause();
    let extended: { error?: unknown } | undefined;
    lock.extend().then(
      () => (extended = {}),
      (error: unknown) => (extended = { error }),
    );
    // The release is bounded by the end of the lease (release-frozen-redis.spec.ts) ...
    await expect(lock.release()).rejects.toBeInstanceOf(RedisLockError);
    // ... and the extension ends with it.
    await expect.poll(() => extended, { timeout: 3_000 }).toBeDefined();
    expect(extended!.error).toBeInstanceOf(RedisLockError);
    expect((extended!.error as Error).message).toMatch(/^Lock "frozen:extend-release" was released while this extension waited for Redis/);
  });
});
