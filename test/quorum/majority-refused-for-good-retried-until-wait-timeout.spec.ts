import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LockNotAcquiredError, RedisLockError } from '../../lib/index.js';
import { createLockApp } from '../support/lock-app.js';
import { countAttempts } from '../support/mechanism.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

/**
 * Found by review of d2f5e3e, which ends an acquire() at its first refusal asking again cannot
 * change (an unknown command, NOPERM) but leaves alone the library's own errors, so that the
 * refusal of a minority of a quorum's masters never ends a call. A quorum on which a majority of
 * the masters refuse for good (EVALSHA and EVAL renamed on them) can never grant, yet its
 * acquire() attempted again until waitTimeout ran out, then failed with LockNotAcquiredError,
 * "Quorum not reached" as its cause. It now ends at its first attempt with a RedisLockError
 * naming the masters' refusal and what to fix. A minority's refusal still does not end a call:
 * its waiter takes the lock once the holder releases it. Counted by attempts, not by time.
 */
describe('quorum: masters refusing for good', () => {
  /** Two servers that know neither EVALSHA nor EVAL, then two that do. */
  const servers: RedisServer[] = [];
  const urls = (...indexes: number[]): string[] => indexes.map((i) => servers[i]!.url);
  beforeAll(async () => {
    const renamed = ['--rename-command', 'EVALSHA', '', '--rename-command', 'EVAL', ''];
    servers.push(await startRedisServer(renamed), await startRedisServer(renamed), await startRedisServer(), await startRedisServer());
  });
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.stop()));
  });

  it('a majority: the call ends at its first attempt, naming what to fix', { timeout: 30_000 }, async () => {
    const app = await createLockApp({ redis: urls(0, 1, 2) as never, shutdownTimeout: 2_000 });
    const admin = new Redis(servers[2]!.url);
    try {
      const attempts = countAttempts(app.locks);
      const error = await app.locks.acquire('majority-refused', { waitTimeout: 4_000 }).then(
        (lock) => lock,
        (caught: unknown) => caught,
      );
      attempts.stop();
      // On main: dozens in the 4 s wait, then LockNotAcquiredError.
      expect(attempts.count, String(error)).toBe(1);
      expect(error).toBeInstanceOf(RedisLockError);
      expect(error).not.toBeInstanceOf(LockNotAcquiredError);
      expect((error as Error).message).toMatch(/Quorum[\s\S]*2 of 3[\s\S]*rename-command/);
      expect((error as Error).cause).toBeInstanceOf(Error);
      // What the master that granted took is given back (its fencing counter stays, as any does).
      await expect.poll(() => admin.exists('lock:{majority-refused}')).toBe(0);
    } finally {
      await admin.quit();
      await app.close();
    }
  });

  it('a minority: a waiter still waits, and takes the lock once it is released', { timeout: 30_000 }, async () => {
    const holder = await createLockApp({ redis: urls(0, 2, 3) as never, shutdownTimeout: 2_000 });
    const waiter = await createLockApp({ redis: urls(0, 2, 3) as never, shutdownTimeout: 2_000 });
    try {
      const held = await holder.locks.acquire('minority-refused', { ttl: 30_000 });
      const attempts = countAttempts(waiter.locks);
      const taking = waiter.locks.acquire('minority-refused', { waitTimeout: 20_000 });
      await attempts.answered();
      attempts.stop();
      await held.release();
      const lock = await taking;
      await lock.release();
    } finally {
      await waiter.close();
      await holder.close();
    }
  });
});
