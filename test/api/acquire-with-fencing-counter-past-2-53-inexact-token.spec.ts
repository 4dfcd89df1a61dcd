import { afterEach, describe, expect, it, vi } from 'vitest';
import { LockNotAcquiredError, RedisLockError } from '../../lib/index.js';
import { createLockApp, type LockApp } from '../support/lock-app.js';
import { LOCK_ACL } from '../support/least-privilege-acl.js';
import { useOwnServer } from '../support/own-server.js';
import { useRedis } from '../support/redis.js';

/**
 * docs/redis-data.md (the fencing counter `P{K}:fence`), docs/fencing.md: a token is a positive
 * integer below 2^53, exact in a double, as FencedRedis and the SQL fence columns compare it. A
 * counter this library wrote never leaves that range (it starts at the clock in milliseconds).
 *
 * Found by a defect hunt (session 49): a counter holding a value written by hand past 2^53
 * (`SET lock:{k}:fence 9007199254740993`), or negative, was taken up by INCR: the acquisition
 * handed out the token 9007199254740994, which is no safe integer (`-4` for `-5`), and the lock's
 * first fenced write refused it with a TypeError blaming the caller's argument. One at the
 * largest integer Redis keeps made INCR overflow, which the call took for Redis not answering: it
 * attempted again until its waitTimeout, then failed "Redis did not answer ... Raise waitTimeout".
 * Each is now refused at its first attempt, as a counter holding a word is, saying which key
 * holds what; the counter is left as it was, and the call leaves nothing of its own.
 */
describe('an acquisition whose fencing counter holds a value no token can be', () => {
  const redis = useRedis();
  let app: LockApp | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it.each([
    ['past 2^53', '9007199254740993', /its fencing counter "lock:\{far\}:fence" holds 9007199254740993, which no fencing token can be/, true],
    // The counter's value is a token (its last), the next one is not.
    ['2^53 - 1, whose next value is 2^53', '9007199254740991', /its fencing counter "lock:\{far\}:fence" holds 9007199254740991, which no fencing token can be/, false],
    ['negative', '-5', /its fencing counter "lock:\{far\}:fence" holds -5, which no fencing token can be/, true],
    ['-1, whose next value is 0', '-1', /its fencing counter "lock:\{far\}:fence" holds -1, which no fencing token can be/, true],
    ['-10^8, put back with a carry', '-100000000', /its fencing counter "lock:\{far\}:fence" holds -100000000, which no fencing token can be/, true],
    ['10^16 - 1, put back with a borrow', '9999999999999999', /its fencing counter "lock:\{far\}:fence" holds 9999999999999999, which no fencing token can be/, true],
    ['the largest integer Redis keeps', '9223372036854775807', /increment or decrement would overflow/, true],
  ])('%s: fails at the first attempt, saying so, the counter left as it was', { timeout: 30_000 }, async (_what, value, refusal, inspectRefused) => {
    app = await createLockApp({});
    await redis.set('lock:{far}:fence', value);
    for (const attempt of [() => app!.locks.acquire('far', { waitTimeout: 60_000 }), () => app!.locks.tryAcquire('far')]) {
      const error = await attempt().then(
        (lock) => new Error(`acquired, token ${String(lock?.fencingToken)}`),
        (caught: unknown) => caught as Error,
      );
      // Failed: acquired with the token 9007199254740994 (a number no FencedRedis write takes), or
      // LockNotAcquiredError after the whole waitTimeout for the overflow.
      expect(error, error.message).toBeInstanceOf(RedisLockError);
      expect(error).not.toBeInstanceOf(LockNotAcquiredError);
      expect(error.message).toMatch(refusal);
      expect(error.message).toMatch(/holds data this library did not write[\s\S]*delete that key/);
      expect(await redis.get('lock:{far}:fence')).toBe(value);
      // What the attempt took is given back (as for a counter holding a word).
      await vi.waitFor(async () => expect(await redis.keys('lock:{far}*')).toEqual(['lock:{far}:fence']), { timeout: 10_000 });
    }
    // inspect() says so too, where it answered the counter as the lock's token (inexact past 2^53).
    if (!inspectRefused) {
      expect((await app.locks.inspect('far')).fencingToken).toBe(Number(value));
      return;
    }
    const inspected = await app.locks.inspect('far').then(
      (info) => new Error(`answered ${JSON.stringify(info)}`),
      (caught: unknown) => caught as Error,
    );
    expect(inspected, inspected.message).toBeInstanceOf(RedisLockError);
    expect(inspected.message).toMatch(/^inspect\("far"\): its fencing counter holds a value no fencing token can be: a key of the lock holds data this library did not write/);
  });

  // Every script that hands a token out takes it from the same INCR (NEXT_FENCING).
  it.each([
    ['a semaphore', { limit: 3 }],
    ['a read lock', { mode: 'read' as const }],
    ['a write lock', { mode: 'write' as const }],
  ])('%s: fails so too, the counter left as it was', { timeout: 30_000 }, async (_what, options) => {
    app = await createLockApp({});
    // With an expiry (a fenceRetention's), kept.
    await redis.set('lock:{far}:fence', '9007199254740993', 'PX', 600_000);
    const error = await app.locks.acquire('far', { ...options, waitTimeout: 60_000 }).then(
      (lock) => new Error(`acquired, token ${String(lock.fencingToken)}`),
      (caught: unknown) => caught as Error,
    );
    expect(error, error.message).toBeInstanceOf(RedisLockError);
    expect(error.message).toMatch(/its fencing counter "lock:\{far\}:fence" holds 9007199254740993, which no fencing token can be/);
    expect(await redis.get('lock:{far}:fence')).toBe('9007199254740993');
    expect(await redis.pttl('lock:{far}:fence')).toBeGreaterThan(0);
    await vi.waitFor(async () => expect(await redis.keys('lock:{far}*')).toEqual(['lock:{far}:fence']), { timeout: 10_000 });
  });
});

describe('an acquisition whose fencing counter holds a value no token can be, as the least-privilege Redis user', () => {
  const server = useOwnServer();

  it('puts the counter back with the commands that user has (docs/deployment.md)', { timeout: 30_000 }, async () => {
    const admin = server.admin();
    await admin.call('ACL', 'SETUSER', 'locks', ...LOCK_ACL);
    const url = new URL(server.url());
    url.username = 'locks';
    url.password = 'lock-secret';
    const app = await createLockApp({ redis: url.toString() });
    try {
      await admin.set('lock:{far}:fence', '9007199254740993', 'PX', 600_000);
      const error = await app.locks.acquire('far').then(
        (lock) => new Error(`acquired, token ${String(lock.fencingToken)}`),
        (caught: unknown) => caught as Error,
      );
      expect(error, error.message).toBeInstanceOf(RedisLockError);
      expect(error.message).toMatch(/its fencing counter "lock:\{far\}:fence" holds 9007199254740993, which no fencing token can be/);
      expect(await admin.get('lock:{far}:fence')).toBe('9007199254740993');
      expect(await admin.pttl('lock:{far}:fence')).toBeGreaterThan(0);
    } finally {
      await app.close();
    }
  });
});
