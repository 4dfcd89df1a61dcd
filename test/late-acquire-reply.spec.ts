import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServer } from '../scripts/redis-server.mjs';
import { RedisUnavailableError } from '../lib/index.js';
import { createLockApp, sleep, type LockApp } from './support/lock-app.js';

// The explorer's first finding (docs/explorer.md): an acquire whose reply comes after the lease
// it started has already run out locally may have been handed on by Redis meanwhile, so it is
// given back and never handed to the caller. The simulation's shrunk schedules of it
// (test/explore/regressions.spec.ts) no longer fail without the fix, since `using()`,
// `@Locked` and the runners now check the lease's deadline before user code starts; this file
// holds the mechanism itself. Its own server: it is frozen (SIGSTOP) while an acquire is in
// flight, so that the reply comes back after the lease, as behind a slow network.
describe('an acquire whose reply comes after its lease ran out locally', () => {
  let server: RedisServer;
  let redis: Redis;
  let app: LockApp | undefined;
  beforeAll(async () => {
    server = await startRedisServer();
    redis = new Redis(server.url);
  });
  afterAll(async () => {
    await redis?.quit();
    await server?.stop();
  });
  afterEach(async () => {
    server.resume();
    await app?.close();
    app = undefined;
    await redis.flushall();
  });

  /** Runs `call` while the server is frozen for longer than the 300 ms lease. */
  async function withLateReply<T>(call: () => Promise<T>): Promise<T> {
    app = await createLockApp({ redis: server.url, ttl: 300 });
    // Connected (and its scripts loaded) before the freeze: only the acquire's reply is late.
    await (await app.locks.acquire('warm-up')).release();
    server.pause();
    const pending = call();
    await sleep(600);
    server.resume();
    return pending;
  }

  it('tryAcquire() rejects (the key was free: not null, which says another holder has it) and gives the lock back in Redis', async () => {
    await redis.set('lock:{late}:fence', 10); // a key locked ten times before
    const error = await withLateReply(() => app!.locks.tryAcquire('late')).catch((caught: unknown) => caught);
    expect((error as Error).message).toMatch(/reply came after the lease \(300 ms\) had run out here; it was given back/);
    // Redis or the network was slow for once, which passes (a 503 with Retry-After over HTTP),
    // not a fault to fix (a 500, logged): asking again may well get the lock.
    expect(error).toBeInstanceOf(RedisUnavailableError);
    // Given back (owner-checked), not left to run out: the key goes, and the next caller gets token 12.
    await expect.poll(() => redis.exists('lock:{late}')).toBe(0);
    const next = await app!.locks.tryAcquire('late');
    expect(next?.fencingToken).toBe(12);
    await next?.release();
  });

  it('a waiting call goes on under a new token and runs its code under a live lease', async () => {
    await redis.set('lock:{late}:fence', 10);
    const seen = await withLateReply(() =>
      app!.locks.using('late', async (lock) => ({ fencingToken: lock.fencingToken, aborted: lock.signal.aborted }), { waitTimeout: 5_000 }),
    );
    // Token 11 was the late grant, given back; the call took the lock again.
    expect(seen).toEqual({ fencingToken: 12, aborted: false });
  });
});
