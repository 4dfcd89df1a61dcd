import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { COMMANDS } from '../../lib/core/stores/redis/lock-lua.js';
import { READ_ACQUIRE, READ_LEAVE, READ_RELEASE } from '../../lib/core/rwlock/read-lua.js';
import { SEMAPHORE_ACQUIRE, SEMAPHORE_LEAVE, SEMAPHORE_RELEASE } from '../../lib/core/semaphore/semaphore-lua.js';
import { useRedis } from '../support/redis.js';
import { useOwnServer } from '../support/own-server.js';

/**
 * Lua does not undo the writes a script made before its error. Every script that hands a fencing
 * token out (to its caller, or to the waiter a release or a give-up hands the lock to) is refused
 * on a counter no token can come from (a word, a value out of the tokens' range, a key of another
 * type): refused before its first write, it leaves every key of the lock as it found it. A release
 * with a waiter queued freed the lock, set it for the waiter, and was refused only then: the lock
 * stayed held for a waiter that never heard of it, until its grant's lease ran out.
 */
const FOREIGN: [string, (redis: Redis, fence: string) => Promise<unknown>, RegExp][] = [
  ['past 2^53', (redis, fence) => redis.set(fence, '9007199254740993'), /FOREIGNFENCINGCOUNTER 9007199254740993 /],
  ['negative', (redis, fence) => redis.set(fence, '-5'), /FOREIGNFENCINGCOUNTER -5 /],
  ['a word', (redis, fence) => redis.set(fence, 'abc'), /value is not an integer or out of range/],
  ['the largest integer Redis keeps', (redis, fence) => redis.set(fence, '9223372036854775807'), /increment or decrement would overflow/],
  ['a hash', (redis, fence) => redis.hset(fence, 'f', '1'), /WRONGTYPE/],
];

/** Every key under the lock's name: its type, its value, and whether it expires. */
async function snapshot(redis: Redis, base: string): Promise<Record<string, unknown>> {
  const keys = (await redis.keys(`${base}*`)).sort();
  const out: Record<string, unknown> = {};
  for (const key of keys) {
    const type = await redis.type(key);
    const value =
      type === 'string'
        ? await redis.get(key)
        : type === 'list'
          ? await redis.lrange(key, 0, -1)
          : type === 'zset'
            ? await redis.zrange(key, 0, -1, 'WITHSCORES')
            : type === 'hash'
              ? await redis.hgetall(key)
              : type;
    out[key] = { type, value, expires: (await redis.pttl(key)) > 0 };
  }
  return out;
}

async function refusedAsFound(redis: Redis, base: string, call: () => Promise<unknown>, refusal: RegExp): Promise<void> {
  const before = await snapshot(redis, base);
  const error = await call().then(
    (reply) => new Error(`answered ${JSON.stringify(reply)}`),
    (caught: unknown) => caught as Error,
  );
  expect(error.message).toMatch(refusal);
  expect(await snapshot(redis, base)).toEqual(before);
}

describe('a lock script refused on its fencing counter', () => {
  const redis = useRedis();
  const settings = '0:60000:0';

  describe.each(FOREIGN)('%s', (_what, spoil, refusal) => {
    const lockNamed = () => `lock:{half-${randomUUID().slice(0, 8)}}`;
    const acquire = (lock: string, owner: string, enqueue = '1') => redis.eval(COMMANDS.acquireOneKey.lua, 1, lock, owner, 60_000, `${settings}:${enqueue}`);

    it('a release that would hand the lock to a waiter leaves it held by the releaser, the waiter queued', async () => {
      const lock = lockNamed();
      expect(await acquire(lock, 'holder')).toEqual(expect.any(Number));
      expect(await acquire(lock, 'waiter')).toEqual([0, expect.any(Number), expect.any(Number), 1]);
      await redis.del(`${lock}:fence`);
      await spoil(redis, `${lock}:fence`);
      await refusedAsFound(redis, lock, () => redis.eval(COMMANDS.releaseOneKey.lua, 1, lock, 'holder', settings), refusal);
      expect(await redis.get(lock)).toBe('holder');
    });

    it('a release that would park the lock (barging) leaves it held by the releaser', async () => {
      const lock = lockNamed();
      expect(await acquire(lock, 'holder')).toEqual(expect.any(Number));
      await redis.del(`${lock}:fence`);
      await spoil(redis, `${lock}:fence`);
      await refusedAsFound(redis, lock, () => redis.eval(COMMANDS.releaseOneKey.lua, 1, lock, 'holder', settings, 'parked', 60_000), refusal);
    });

    it('an acquisition of a free lock takes nothing', async () => {
      const lock = lockNamed();
      await spoil(redis, `${lock}:fence`);
      await refusedAsFound(redis, lock, () => acquire(lock, 'caller'), refusal);
      expect(await redis.exists(lock)).toBe(0);
    });

    it('a waiter giving up the lock its own attempt took leaves it, and the queue, as they were', async () => {
      const lock = lockNamed();
      expect(await acquire(lock, 'holder')).toEqual(expect.any(Number));
      expect(await acquire(lock, 'waiter')).toEqual([0, expect.any(Number), expect.any(Number), 1]);
      await redis.del(`${lock}:fence`);
      await spoil(redis, `${lock}:fence`);
      await refusedAsFound(redis, lock, () => redis.eval(COMMANDS.leave.lua, 5, lock, `${lock}:fence`, `${lock}:queue`, `${lock}:waiters`, `${lock}:released`, 'holder', 60_000, settings), refusal);
    });

    it('the last reader releasing, a writer queued, leaves the readers and the queue as they were', async () => {
      const lock = lockNamed();
      const readKeys = (token: string) => [lock, `${lock}:fence`, `${lock}:queue`, `${lock}:waiters`, `${lock}:released`, `${lock}:reader:${token}`, `${lock}:readers`];
      expect(await redis.eval(READ_ACQUIRE, 7, ...readKeys('reader'), 'reader', 60_000, `${settings}:1`)).toEqual([1, expect.any(Number)]);
      expect(await acquire(lock, 'writer')).toEqual([0, expect.any(Number), expect.any(Number), 1]);
      await redis.del(`${lock}:fence`);
      await spoil(redis, `${lock}:fence`);
      await refusedAsFound(redis, lock, () => redis.eval(READ_RELEASE, 7, ...readKeys('reader'), 'reader', settings), refusal);
      await refusedAsFound(redis, lock, () => redis.eval(READ_LEAVE, 7, ...readKeys('reader'), 'reader', 60_000, settings), refusal);
      await refusedAsFound(redis, lock, () => redis.eval(READ_ACQUIRE, 7, ...readKeys('other'), 'other', 60_000, `${settings}:1`), refusal);
    });

    it('a semaphore acquisition with nobody waiting takes no permit, alone or beside a holder', async () => {
      const base = `lock:{half-${randomUUID().slice(0, 8)}}`;
      const permit = (token: string) => `${base}:permit:${token}`;
      const semAcquire = (token: string) => redis.eval(SEMAPHORE_ACQUIRE.derived, 1, permit(token), token, 60_000, `${settings}:1:2:1`);
      // A holder alone (no hash yet): its fast path writes nothing before the counter's INCR.
      await spoil(redis, `${base}:fence`);
      await refusedAsFound(redis, base, () => semAcquire('first'), refusal);
      // Beside a holder: the fast path's SET NX of the caller's permit is taken back (the holder
      // alone is first written in the full layout, which counts the same holder).
      await redis.del(`${base}:fence`);
      expect(await semAcquire('holder')).toEqual(expect.any(Number));
      await redis.del(`${base}:fence`);
      await spoil(redis, `${base}:fence`);
      const error = await semAcquire('caller').then(
        (reply) => new Error(`answered ${JSON.stringify(reply)}`),
        (caught: unknown) => caught as Error,
      );
      expect(error.message).toMatch(refusal);
      expect(await redis.exists(permit('caller'))).toBe(0);
      const holders = await redis.hgetall(`${base}:holders`);
      expect(Object.keys(holders).filter((field) => field.includes('caller'))).toEqual([]);
      expect(holders['!holder'] ?? holders.holder).toEqual(expect.any(String));
      expect(holders[':used'] ?? '1').toBe('1');
    });

    it('a semaphore release with a waiter queued leaves the permits and the queue as they were', async () => {
      const base = `lock:{half-${randomUUID().slice(0, 8)}}`;
      const permit = (token: string) => `${base}:permit:${token}`;
      const semAcquire = (token: string) => redis.eval(SEMAPHORE_ACQUIRE.derived, 1, permit(token), token, 60_000, `${settings}:1:1:1`);
      expect(await semAcquire('holder')).toEqual(expect.anything());
      expect(await semAcquire('waiter')).toEqual([0, expect.any(Number), expect.any(Number), 1]);
      await redis.del(`${base}:fence`);
      await spoil(redis, `${base}:fence`);
      await refusedAsFound(redis, base, () => redis.eval(SEMAPHORE_RELEASE.derived, 1, permit('holder'), 'holder', `${settings}:1`), refusal);
      await refusedAsFound(redis, base, () => redis.eval(SEMAPHORE_LEAVE.derived, 1, permit('holder'), 'holder', 0, `${settings}:0:0`), refusal);
      await refusedAsFound(redis, base, () => semAcquire('other'), refusal);
    });
  });
});

/**
 * The same for a key of another type among the lock's others (its queue list, its waiters set, a
 * read lock's readers hash, a semaphore's queue keys and due set): Redis refuses the first command
 * on it with WRONGTYPE, which came after the script's first writes (a release had deleted the
 * lock, a give-up had taken the waiter out of the list alone, a semaphore release had dropped the
 * holder's permit and entry). Found by writing a string, a hash or a list at each key in turn.
 */
describe('a lock script refused on a key of another type', () => {
  const redis = useRedis();
  const settings = '0:60000:0';
  const spoil = async (key: string, kind: 'string' | 'hash' | 'list') => {
    await redis.del(key);
    if (kind === 'string') await redis.set(key, 'abc');
    else if (kind === 'hash') await redis.hset(key, 'f', 'v');
    else await redis.rpush(key, 'v');
  };
  const named = () => `lock:{half-${randomUUID().slice(0, 8)}}`;
  const acquire = (lock: string, owner: string) => redis.eval(COMMANDS.acquireOneKey.lua, 1, lock, owner, 60_000, `${settings}:1`);
  const lockKeys = (lock: string) => [lock, `${lock}:fence`, `${lock}:queue`, `${lock}:waiters`, `${lock}:released`];
  const readKeys = (lock: string, token: string) => [...lockKeys(lock), `${lock}:reader:${token}`, `${lock}:readers`];

  it.each([
    [':queue', 'string'],
    [':queue', 'hash'],
    [':waiters', 'string'],
    [':waiters', 'list'],
  ] as const)('a release with a waiter queued, %s holding a %s, leaves the lock held by the releaser', async (suffix, kind) => {
    const lock = named();
    await acquire(lock, 'holder');
    await acquire(lock, 'waiter');
    await spoil(lock + suffix, kind);
    await refusedAsFound(redis, lock, () => redis.eval(COMMANDS.releaseOneKey.lua, 1, lock, 'holder', settings), /WRONGTYPE/);
    expect(await redis.get(lock)).toBe('holder');
  });

  it.each([['string'], ['hash'], ['list']] as const)('a waiter giving up, its waiters set holding a %s, stays in the queue list', async (kind) => {
    const lock = named();
    await acquire(lock, 'holder');
    await acquire(lock, 'waiter');
    await spoil(`${lock}:waiters`, kind);
    await refusedAsFound(redis, lock, () => redis.eval(COMMANDS.leave.lua, 5, ...lockKeys(lock), 'waiter', 60_000, settings), /WRONGTYPE/);
  });

  it.each([
    [':queue', 'string'],
    [':waiters', 'hash'],
    [':readers', 'string'],
  ] as const)('the last reader releasing, a writer queued, %s holding a %s, keeps its read lock', async (suffix, kind) => {
    const lock = named();
    await redis.eval(READ_ACQUIRE, 7, ...readKeys(lock, 'reader'), 'reader', 60_000, `${settings}:1`);
    await acquire(lock, 'writer');
    await spoil(lock + suffix, kind);
    await refusedAsFound(redis, lock, () => redis.eval(READ_RELEASE, 7, ...readKeys(lock, 'reader'), 'reader', settings), /WRONGTYPE/);
  });

  it('a reader giving up, its readers hash holding a string, keeps its key', async () => {
    const lock = named();
    await redis.eval(READ_ACQUIRE, 7, ...readKeys(lock, 'reader'), 'reader', 60_000, `${settings}:1`);
    await acquire(lock, 'writer');
    await spoil(`${lock}:readers`, 'string');
    await refusedAsFound(redis, lock, () => redis.eval(READ_LEAVE, 7, ...readKeys(lock, 'reader'), 'reader', 60_000, settings), /WRONGTYPE/);
  });

  it.each([
    ['release', ':sq', 'string'],
    ['release', ':sw', 'list'],
    ['release', ':due', 'string'],
    ['leave', ':sw', 'hash'],
    ['leave', ':due', 'list'],
    ['acquire', ':sq', 'hash'],
  ] as const)('a semaphore %s, a waiter queued, %s holding a %s, leaves its permits and queue as they were', async (call, suffix, kind) => {
    const base = named();
    const permit = (token: string) => `${base}:permit:${token}`;
    const semAcquire = (token: string) => redis.eval(SEMAPHORE_ACQUIRE.derived, 1, permit(token), token, 60_000, `${settings}:1:1:1`);
    await semAcquire('holder');
    await semAcquire('waiter');
    await spoil(base + suffix, kind);
    const run = {
      release: () => redis.eval(SEMAPHORE_RELEASE.derived, 1, permit('holder'), 'holder', `${settings}:1`),
      leave: () => redis.eval(SEMAPHORE_LEAVE.derived, 1, permit('waiter'), 'waiter', 60_000, `${settings}:1:1`),
      acquire: () => semAcquire('other'),
    }[call];
    await refusedAsFound(redis, base, run, /WRONGTYPE/);
  });

  it.each([
    ['a word', 'abc', /value is not an integer/],
    ['a hash', undefined, /WRONGTYPE/],
  ] as const)('a quorum master whose counter holds %s takes no lock', async (_what, value, refusal) => {
    const lock = named();
    if (value === undefined) await redis.hset(`${lock}:fence`, 'f', 'v');
    else await redis.set(`${lock}:fence`, value);
    await refusedAsFound(redis, lock, () => redis.eval(COMMANDS.quorumAcquire.lua, 1, lock, 'caller', 60_000, '0', '1000'), refusal);
    expect(await redis.exists(lock)).toBe(0);
  });

  // A grant again to the owner token holding the lock there pushes its lease on (PEXPIRE), which
  // cannot be taken back as a first grant's SET NX is (DEL): it looks at the counter first.
  it.each([
    ['a word', 'abc', /value is not an integer/],
    ['a hash', undefined, /WRONGTYPE/],
  ] as const)('a quorum master holding the lock for the caller, whose counter holds %s, leaves its lease as it was', async (_what, value, refusal) => {
    const lock = named();
    await redis.set(lock, 'caller', 'PX', 60_000);
    if (value === undefined) await redis.hset(`${lock}:fence`, 'f', 'v');
    else await redis.set(`${lock}:fence`, value);
    await refusedAsFound(redis, lock, () => redis.eval(COMMANDS.quorumAcquire.lua, 1, lock, 'caller', 600_000, '0', '1000'), refusal);
    expect(await redis.pttl(lock)).toBeLessThanOrEqual(60_000);
  });
});

/**
 * A key the ACL user may not touch refuses the first command on it (NOPERM). A parking release
 * (barging) read `P{K}:wanted` only after it had set the lock for the park token and taken the
 * next token: refused there, it left the lock parked for a token its process never heard of.
 */
describe('a parking release refused by the ACL on the barging waiters\' key', () => {
  const server = useOwnServer();

  it('leaves the lock held by the releaser and the counter as it was', async () => {
    const admin = server.admin();
    const lock = 'lock:{park}';
    await admin.call('ACL', 'SETUSER', 'halfdone', 'on', '>halfdone-secret', '+@all', 'allchannels', ...[lock, `${lock}:fence`, `${lock}:queue`, `${lock}:waiters`].map((key) => `~${key}`));
    const url = new URL(server.url());
    url.username = 'halfdone';
    url.password = 'halfdone-secret';
    const user = new Redis(url.toString());
    try {
      await admin.set(lock, 'holder', 'PX', 60_000);
      await admin.set(`${lock}:fence`, '41');
      const error = await user.eval(COMMANDS.releaseOneKey.lua, 1, lock, 'holder', '0:60000:0', 'parked', 60_000).then(
        (reply) => new Error(`answered ${JSON.stringify(reply)}`),
        (caught: unknown) => caught as Error,
      );
      expect(error.message).toMatch(/NOPERM|can't access/);
      expect(await admin.get(lock)).toBe('holder');
      expect(await admin.get(`${lock}:fence`)).toBe('41');
    } finally {
      user.disconnect();
      await admin.call('ACL', 'DELUSER', 'halfdone');
    }
  });
});

describe('a release() refused by the fencing counter, a waiter queued', () => {
  const redis = useRedis();

  it('rejects with the RedisLockError naming the counter, the lock still the holder\'s and the waiter still waiting', { timeout: 30_000 }, async () => {
    const { createLockApp } = await import('../support/lock-app.js');
    const { RedisLockError } = await import('../../lib/index.js');
    const app = await createLockApp({});
    try {
      const lock = await app.locks.acquire('handed', { ttl: 60_000 });
      const waiting = app.locks.acquire('handed', { waitTimeout: 60_000 }).then(
        (taken) => taken,
        (caught: unknown) => caught as Error,
      );
      await expect.poll(() => redis.llen('lock:{handed}:queue'), { timeout: 10_000 }).toBe(1);
      await redis.set('lock:{handed}:fence', '9007199254740993');
      const before = await redis.get('lock:{handed}');
      const error = await lock.release().then(
        () => new Error('released'),
        (caught: unknown) => caught as Error,
      );
      expect(error, error.message).toBeInstanceOf(RedisLockError);
      expect(error.message).toMatch(/its fencing counter "lock:\{handed\}:fence" holds 9007199254740993, which no fencing token can be/);
      expect(await redis.get('lock:{handed}')).toBe(before);
      expect(await redis.lrange('lock:{handed}:queue', 0, -1)).toHaveLength(1);
      await redis.del('lock:{handed}:fence', 'lock:{handed}');
      await redis.publish('lock:{handed}:released', '*');
      const taken = await waiting;
      if (!(taken instanceof Error)) await taken.release();
    } finally {
      await app.close();
    }
  });
});
