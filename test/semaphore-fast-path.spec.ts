import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { lockRedisKeys } from '../lib/core/keys/lock-key.js';
import { semaphoreKeys } from '../lib/core/semaphore/semaphore-keys.js';
import { GONE, RENEWED } from '../lib/core/stores/redis/lock-lua.js';
import { LockScripts } from '../lib/core/stores/redis/lock-scripts.js';
import { driverFor } from '../lib/core/stores/redis/drivers/driver-for.js';
import { SemaphoreScripts } from '../lib/core/semaphore/semaphore-scripts.js';
import { Redis } from 'ioredis';
import { sleep, useLockApps } from './support/lock-app.js';
import { isScriptCall, watchCommands } from './support/monitor.js';
import { redisUrl, useRedis } from './support/redis.js';

const uniqueKey = () => `semfast-${randomUUID().slice(0, 8)}`;
const WAITER_LEASE = 1_000;
/** The names of each token's acquisition of `key`'s semaphore, as the stores are handed them. */
const names = (key: string, limit: number, permits = 1) => (token: string) => semaphoreKeys(lockRedisKeys('lock:', key), token, key, limit, permits);

/**
 * The semaphore scripts' costs, by the commands Redis runs (MONITOR shows those a script runs
 * too): a semaphore nobody waits for is taken and given back without the queue code, and a
 * count looks only at holders whose known deadline has passed, never at every holder.
 */
describe('a semaphore nobody waits for', () => {
  const redis = useRedis();
  const app = useLockApps();

  it('is taken and released with one script call each, the queue untouched, no permit counted', async () => {
    const { locks } = await app();
    // Have the scripts cached on the server first (a NOSCRIPT reply makes one more call).
    await (await locks.acquire(uniqueKey(), { limit: 3 })).release();
    const key = uniqueKey();
    const root = `lock:{${key}}`;
    const watched = await Promise.all([`${root}:sq`, `${root}:holders`, `${root}:due`].map((name) => watchCommands(name)));
    const permits = await watchCommands(`${root}:permit:`, undefined, (arg) => arg.startsWith(`${root}:permit:`));
    const lock = await locks.acquire(key, { limit: 3 });
    await lock.release();
    await Promise.all([...watched, permits].map((watch) => watch.stop()));
    const [queue, holders, due] = watched.map((watch) => watch.seen.map((command) => command.args[0]!.toUpperCase()));
    // One script call each, naming the permit alone (the other six names are derived in Lua).
    // The acquisition alone is a script call; the release is not (a plain HDEL).
    const calls = permits.seen.filter(isScriptCall);
    expect(calls.map((command) => command.args[2])).toEqual(['1']);
    // Nobody waits: nothing under the holders name, so the queue keys are not read.
    expect(queue).toEqual([]);
    // Taken alone: the holders name found empty (EXISTS), one field written with the lease as the
    // hash's expiry, deleted by the release's HDEL (the hash, left empty, goes with it); the due
    // set named only in that EXISTS (one left by a hash deleted from outside), never written.
    expect(holders).toEqual(['EXISTS', 'HSET', 'PEXPIRE', 'HDEL']);
    expect(due).toEqual(['EXISTS']);
    // A holder alone has no permit key: its field, with the hash's expiry, is its permit.
    expect(permits.seen.filter((command) => !isScriptCall(command))).toEqual([]);
    expect((await redis.keys(`${root}*`)).sort()).toEqual([`${root}:fence`]);
  });

  it('lets a holder out beside others without writing the due set, or naming it but in the holder-alone test', async () => {
    const { locks } = await app();
    const key = uniqueKey();
    const due = await watchCommands(`lock:{${key}}:due`);
    const first = await locks.acquire(key, { limit: 3 });
    const second = await locks.acquire(key, { limit: 3 });
    await first.release();
    expect(await redis.hget(`lock:{${key}}:holders`, ':used')).toBe('1');
    await second.release();
    await due.stop();
    // Each acquire's holder-alone test (EXISTS of the hash, the waiters set and the due set), nothing else.
    expect(due.seen.map(({ args }) => args[0]!.toUpperCase())).toEqual(['EXISTS', 'EXISTS']);
    expect((await redis.keys(`lock:{${key}}*`)).sort()).toEqual([`lock:{${key}}:fence`]);
  });

  it('is not taken twice by a caller a release granted a permit to already', async () => {
    const holder = await app({ ttl: 30_000 });
    const waiter = await app({ ttl: 30_000 });
    const key = uniqueKey();
    const held = await holder.locks.acquire(key, { limit: 1 });
    const waiting = waiter.locks.acquire(key, { limit: 1, waitTimeout: 10_000 });
    while ((await redis.exists(`lock:{${key}}:sq`)) === 0) await sleep(5);
    await held.release();
    const lock = await waiting;
    expect(lock.fencingToken).toBe(held.fencingToken + 1);
    expect(await redis.hget(`lock:{${key}}:holders`, ':used')).toBe('1');
    await lock.release();
    expect((await redis.keys(`lock:{${key}}*`)).sort()).toEqual([`lock:{${key}}:fence`]);
  });
});

describe('a full semaphore', () => {
  const redis = useRedis();

  const store = () => new LockScripts(redis);

  it('reads the lease of each of 100 holders once, then none whose known deadline is ahead', async () => {
    const scripts = store();
    const key = uniqueKey();
    const keys = names(key, 100);
    for (let i = 0; i < 100; i++) expect(await scripts.semaphores.acquire(keys(`h${i}`), `h${i}`, 60_000, true, WAITER_LEASE)).toMatchObject({ acquired: true });
    const permits = await watchCommands(`lock:{${key}}:permit:`, undefined, (arg) => arg.startsWith(`lock:{${key}}:permit:`));
    const leasesRead = () => permits.seen.filter((command) => command.args[0]!.toUpperCase() === 'PTTL').length;
    // The fast path let them in unscored: the first count scores each (one PTTL), ...
    expect(await scripts.semaphores.acquire(keys('late'), 'late', 60_000, true, WAITER_LEASE)).toMatchObject({ acquired: false });
    // MONITOR's stream may come late on a loaded machine: wait for it, not a fixed 30 ms.
    await expect.poll(leasesRead).toBe(100);
    // ... and the next ones read none: every deadline is a minute ahead.
    expect(await scripts.semaphores.acquire(keys('late'), 'late', 60_000, true, WAITER_LEASE)).toMatchObject({ acquired: false });
    expect(await scripts.semaphores.acquire(keys('later'), 'later', 60_000, true, WAITER_LEASE)).toMatchObject({ acquired: false });
    await permits.stop();
    expect(leasesRead()).toBe(100);
    await scripts.semaphores.leave(keys('later'), 'later', 60_000, WAITER_LEASE);
    for (let i = 0; i < 100; i++) await scripts.semaphores.release(keys(`h${i}`), `h${i}`, WAITER_LEASE);
    await scripts.semaphores.leave(keys('late'), 'late', 60_000, WAITER_LEASE);
  });

  it('frees a crashed holder\'s permit when its lease runs out on the Redis clock, a lease made shorter too', async () => {
    const scripts = store();
    const key = uniqueKey();
    const keys = names(key, 2);
    expect(await scripts.semaphores.acquire(keys('short'), 'short', 300, true, WAITER_LEASE)).toMatchObject({ acquired: true });
    // Its deadline was 60 s ahead when counted; its holder then shortened it to 300 ms and crashed.
    expect(await scripts.semaphores.acquire(keys('shortened'), 'shortened', 60_000, true, WAITER_LEASE)).toMatchObject({ acquired: true });
    expect(await scripts.renew(keys('shortened').lock, 'shortened', 300)).toBe(true);
    expect(await scripts.semaphores.acquire(keys('late'), 'late', 60_000, false, WAITER_LEASE)).toMatchObject({ acquired: false });
    // Redis' own clock decides: both permit keys are gone once their leases ran out.
    while ((await redis.exists(keys('short').lock, keys('shortened').lock)) > 0) await sleep(20);
    expect(await scripts.semaphores.acquire(keys('late'), 'late', 60_000, false, WAITER_LEASE)).toMatchObject({ acquired: true });
    expect(await scripts.semaphores.acquire(keys('later'), 'later', 60_000, false, WAITER_LEASE)).toMatchObject({ acquired: true });
    expect(await redis.hget(`lock:{${key}}:holders`, ':used')).toBe('2');
    for (const token of ['late', 'later']) await scripts.semaphores.release(keys(token), token, WAITER_LEASE);
    expect((await redis.keys(`lock:{${key}}*`)).sort()).toEqual([`lock:{${key}}:fence`]);
  });
});

describe('the fast paths and the waiters', () => {
  const redis = useRedis();

  const store = () => new LockScripts(redis);
  /** Commands that name the queue keys from now on: the fast paths name neither. */
  const watchQueue = async (key: string) => {
    const root = `lock:{${key}}`;
    return watchCommands(`${root}:sq`, undefined, (arg) => arg === `${root}:sq` || arg === `${root}:sw`);
  };
  /**
   * A first holder let in for 200 ms that never renews: returns its fencing token once Redis
   * dropped its permit (the hash of a holder alone, see LONE in semaphore-lua.ts).
   */
  const lapse = async (scripts: LockScripts, keys: ReturnType<typeof names>, token: string) => {
    const reply = await scripts.semaphores.acquire(keys(token), token, 200, true, WAITER_LEASE);
    expect(reply).toMatchObject({ acquired: true });
    while ((await redis.exists(keys(token).lock, keys(token).semaphore.holders)) > 0) await sleep(20);
    return (reply as { fencingToken: number }).fencingToken;
  };

  it('keeps a newcomer behind a waiter although its permit fits, and serves the waiter on release', async () => {
    const scripts = store();
    const key = uniqueKey();
    const one = names(key, 2);
    const two = names(key, 2, 2);
    expect(await scripts.semaphores.acquire(one('holder'), 'holder', 60_000, true, WAITER_LEASE)).toMatchObject({ acquired: true });
    expect(await scripts.semaphores.acquire(two('big'), 'big', 60_000, true, WAITER_LEASE)).toMatchObject({ acquired: false });
    // The mark holds the settings the waiter queued with (fence retention, waiter lease): a renewal
    // that frees permits hands them on with those (see SEMAPHORE_HAND_ON).
    expect(await redis.hget(`lock:{${key}}:holders`, ':queued')).toBe(`0:${WAITER_LEASE}`);
    // One permit is free, and the newcomer asks for one: FIFO keeps it behind the waiter for two.
    expect(await scripts.semaphores.acquire(one('small'), 'small', 60_000, false, WAITER_LEASE)).toMatchObject({ acquired: false });
    expect(await scripts.semaphores.release(one('holder'), 'holder', WAITER_LEASE)).toMatchObject({ released: true, grants: [{ token: 'big' }] });
    // The last waiter was served: the mark went with it, and the next release takes the fast path.
    expect(await redis.hget(`lock:{${key}}:holders`, ':queued')).toBeNull();
    const queue = await watchQueue(key);
    expect(await scripts.semaphores.release(two('big'), 'big', WAITER_LEASE)).toMatchObject({ released: true, grants: [] });
    await queue.stop();
    expect(queue.seen).toEqual([]);
    expect((await redis.keys(`lock:{${key}}*`)).sort()).toEqual([`lock:{${key}}:fence`]);
  });

  it('drops the mark of a waiter that died with one full call, then takes the fast path again', async () => {
    const scripts = store();
    const key = uniqueKey();
    const keys = names(key, 2);
    const lease = 200;
    for (const token of ['a', 'b']) expect(await scripts.semaphores.acquire(keys(token), token, 60_000, true, lease)).toMatchObject({ acquired: true });
    // A waiter joins and never comes back: its place lapses with its lease, on the Redis clock.
    expect(await scripts.semaphores.acquire(keys('dead'), 'dead', 60_000, true, lease)).toMatchObject({ acquired: false });
    while ((await redis.exists(`lock:{${key}}:sq`, `lock:{${key}}:sw`)) > 0) await sleep(20);
    expect(await redis.hget(`lock:{${key}}:holders`, ':queued')).toBe(`0:${lease}`);
    // The stale mark sends this release the full way, which finds nobody waiting and drops it.
    expect(await scripts.semaphores.release(keys('a'), 'a', lease)).toMatchObject({ released: true, grants: [] });
    expect(await redis.hget(`lock:{${key}}:holders`, ':queued')).toBeNull();
    const queue = await watchQueue(key);
    expect(await scripts.semaphores.acquire(keys('c'), 'c', 60_000, true, lease)).toMatchObject({ acquired: true });
    await queue.stop();
    // Only the holder-alone test names the waiters set, in one EXISTS with the hash (found here) and the due set.
    expect(queue.seen.map(({ args }) => args)).toEqual([['EXISTS', `lock:{${key}}:holders`, `lock:{${key}}:sw`, `lock:{${key}}:due`]]);
    expect(await redis.hget(`lock:{${key}}:holders`, ':used')).toBe('2');
    for (const token of ['b', 'c']) await scripts.semaphores.release(keys(token), token, lease);
    expect((await redis.keys(`lock:{${key}}*`)).sort()).toEqual([`lock:{${key}}:fence`]);
  });

  it('does not take back a permit whose lease ran out and went to another holder', async () => {
    const scripts = store();
    const key = uniqueKey();
    const keys = names(key, 1);
    await lapse(scripts, keys, 'late');
    const next = await scripts.semaphores.acquire(keys('next'), 'next', 60_000, true, WAITER_LEASE);
    expect(next).toMatchObject({ acquired: true });
    // The late holder's release finds no permit of its own: "not yours", and the other keeps its.
    expect(await scripts.semaphores.release(keys('late'), 'late', WAITER_LEASE)).toMatchObject({ released: false });
    expect(await redis.get(keys('next').lock)).toBe('next');
    expect(await redis.hget(`lock:{${key}}:holders`, ':used')).toBe('1');
    expect(await scripts.semaphores.acquire(keys('third'), 'third', 60_000, false, WAITER_LEASE)).toMatchObject({ acquired: false });
    expect(await scripts.semaphores.release(keys('next'), 'next', WAITER_LEASE)).toMatchObject({ released: true });
    expect((await redis.keys(`lock:{${key}}*`)).sort()).toEqual([`lock:{${key}}:fence`]);
  });

  it('queues a caller behind a live head, and hands a released permit to that head, reading each key once', async () => {
    const scripts = store();
    const key = uniqueKey();
    const root = `lock:{${key}}`;
    const keys = names(key, 2);
    for (const token of ['a', 'b']) expect(await scripts.semaphores.acquire(keys(token), token, 60_000, true, WAITER_LEASE)).toMatchObject({ acquired: true });
    for (const token of ['w1', 'w2']) expect(await scripts.semaphores.acquire(keys(token), token, 60_000, true, WAITER_LEASE)).toMatchObject({ acquired: false });
    // Every command a script runs on the semaphore's keys, and its TIME (MONITOR shows them).
    const watch = await watchCommands(root, undefined, (arg) => arg.startsWith(root) || /^time$/i.test(arg));
    expect(await scripts.semaphores.acquire(keys('w3'), 'w3', 60_000, true, WAITER_LEASE)).toMatchObject({ acquired: false });
    const queued = await watch.stop().then(() => watch.seen.filter((command) => !isScriptCall(command)).map((command) => command.args[0]!.toUpperCase()));
    // The fast part's HMGET (with the caller's entry: not granted already) serves the full part
    // too; the due set's first member, read once, tells that it exists, that no deadline has
    // passed (no ZRANGEBYSCORE) and the soonest one; the semaphore is full, so the caller joins
    // without reading the head (restore_list's EXISTS checks the list instead). The full part looks
    // at the fencing counter (GET) and the queue keys (LINDEX, ZSCORE) before any write of its own: a
    // key of another type refuses the call with nothing changed. The fast part reads no counter
    // ahead: a refusal there deletes the permit it set (nextFencingUndoing).
    expect(queued).toEqual([
      'EXISTS', 'HMGET', 'GET', 'LINDEX', 'ZSCORE', 'TIME', 'ZRANGE', 'EXISTS',
      'ZADD', 'RPUSH', 'PEXPIRE', 'PEXPIRE', 'PTTL', 'PTTL', 'GET',
    ]);
    const release = await watchCommands(root, undefined, (arg) => arg.startsWith(root) || /^time$/i.test(arg));
    expect(await scripts.semaphores.release(keys('b'), 'b', WAITER_LEASE)).toMatchObject({ released: true, grants: [{ token: 'w1' }] });
    const released = await release.stop().then(() => release.seen.filter((command) => !isScriptCall(command)).map((command) => command.args[0]!.toUpperCase()));
    // The holder's entry and the counts read once (HMGET), the due set's first member once,
    // ':used' written once (the grant's HSET); with every permit held again, the queue's next
    // member is only looked for (LINDEX), not checked for life: it tells that the queue is not idle.
    // The head is asked whether it holds already (HEXISTS: a place left queued when a deleted hash
    // took the ':queued' mark with it, see grant_fitting) before its grant.
    // With waiters queued, the counter, the queue keys and the due set are looked at before the first write.
    expect(released).toEqual([
      'HMGET', 'GET', 'LINDEX', 'ZSCORE', 'ZSCORE', 'DEL', 'HDEL', 'ZREM', 'TIME', 'ZRANGE', 'LINDEX', 'ZSCORE', 'HEXISTS',
      'SET', 'INCR', 'HSET', 'ZADD', 'PTTL', 'PTTL', 'LPOP', 'ZREM', 'PUBLISH', 'LINDEX',
    ]);
    expect(await redis.hget(`${root}:holders`, ':used')).toBe('2');
    expect(await redis.lrange(`${root}:sq`, 0, -1)).toEqual(['w2:60000:1', 'w3:60000:1']);
    for (const token of ['w2', 'w3']) await scripts.semaphores.leave(keys(token), token, 60_000, WAITER_LEASE);
    for (const token of ['a', 'w1']) expect(await scripts.semaphores.release(keys(token), token, WAITER_LEASE)).toMatchObject({ released: true });
    expect((await redis.keys(`${root}*`)).sort()).toEqual([`${root}:fence`]);
  });

  it('answers "not yours" to the last holder whose lease ran out, and leaves nothing behind', async () => {
    const scripts = store();
    const key = uniqueKey();
    const keys = names(key, 2);
    const lapsed = await lapse(scripts, keys, 'lapsed');
    expect(await scripts.semaphores.release(keys('lapsed'), 'lapsed', WAITER_LEASE)).toMatchObject({ released: false });
    expect((await redis.keys(`lock:{${key}}*`)).sort()).toEqual([`lock:{${key}}:fence`]);
    const next = await scripts.semaphores.acquire(keys('next'), 'next', 60_000, true, WAITER_LEASE);
    expect(next).toMatchObject({ acquired: true, fencingToken: lapsed + 1 });
    expect(await redis.hgetall(`lock:{${key}}:holders`)).toEqual({ '!next': `1:2:${lapsed + 1}` });
    expect(await scripts.semaphores.release(keys('next'), 'next', WAITER_LEASE)).toMatchObject({ released: true });
  });
});

describe('a semaphore taken alone', () => {
  const redis = useRedis();

  const store = () => new LockScripts(redis);
  const holdersOf = (key: string) => `lock:{${key}}:holders`;

  it('keeps its holder in one hash field, unfolded by the next caller, who is counted beside it', async () => {
    const scripts = store();
    const key = uniqueKey();
    const keys = names(key, 2);
    const alone = await scripts.semaphores.acquire(keys('a'), 'a', 60_000, true, WAITER_LEASE);
    expect(alone).toMatchObject({ acquired: true });
    const fencing = (alone as { fencingToken: number }).fencingToken;
    expect(await redis.hgetall(holdersOf(key))).toEqual({ '!a': `1:2:${fencing}` });
    expect(await redis.exists(keys('a').lock)).toBe(0);
    expect(await scripts.inspectSemaphore(lockRedisKeys('lock:', key))).toMatchObject({ limit: 2, waiters: 0, holders: [{ token: 'a', permits: 1, fencingToken: fencing }] });
    const second = await scripts.semaphores.acquire(keys('b'), 'b', 60_000, true, WAITER_LEASE);
    expect(second).toMatchObject({ acquired: true, fencingToken: fencing + 1 });
    const unfolded = await redis.hgetall(holdersOf(key));
    expect(unfolded).toMatchObject({ a: `1:${fencing}`, ':used': '2', ':limit': '2' });
    expect(unfolded['!a']).toBeUndefined();
    expect(await redis.get(keys('a').lock)).toBe('a');
    expect(await redis.pttl(holdersOf(key))).toBeGreaterThan(0);
    // Full: a third caller is refused.
    expect(await scripts.semaphores.acquire(keys('c'), 'c', 60_000, false, WAITER_LEASE)).toMatchObject({ acquired: false });
    const inspected = await scripts.inspectSemaphore(lockRedisKeys('lock:', key));
    expect(inspected?.holders.map((holder) => holder.token).sort()).toEqual(['a', 'b']);
    // The first holder's HDEL finds no field of its own, and it leaves through the script.
    expect(await scripts.semaphores.release(keys('a'), 'a', WAITER_LEASE)).toMatchObject({ released: true });
    expect(await redis.hget(holdersOf(key), ':used')).toBe('1');
    expect(await redis.exists(keys('a').lock)).toBe(0);
    expect(await scripts.semaphores.release(keys('b'), 'b', WAITER_LEASE)).toMatchObject({ released: true });
    expect((await redis.keys(`lock:{${key}}*`)).sort()).toEqual([`lock:{${key}}:fence`]);
  });

  it('refuses a second caller over the limit or with another limit, and hands the permit to a waiter on release', async () => {
    const scripts = store();
    const key = uniqueKey();
    const keys = names(key, 1);
    expect(await scripts.semaphores.acquire(keys('a'), 'a', 60_000, true, WAITER_LEASE)).toMatchObject({ acquired: true });
    expect(await scripts.semaphores.acquire(names(key, 3)('x'), 'x', 60_000, false, WAITER_LEASE)).toMatchObject({ acquired: false, limitInUse: 1 });
    expect(await scripts.semaphores.acquire(keys('b'), 'b', 60_000, true, WAITER_LEASE)).toMatchObject({ acquired: false });
    const released = await scripts.semaphores.release(keys('a'), 'a', WAITER_LEASE);
    expect(released).toMatchObject({ released: true });
    expect(released.grants.map((grant) => grant.token)).toEqual(['b']);
    expect(await redis.hget(holdersOf(key), 'b')).toMatch(/^1:\d+$/);
    expect(await scripts.semaphores.release(keys('b'), 'b', WAITER_LEASE)).toMatchObject({ released: true });
    expect((await redis.keys(`lock:{${key}}*`)).sort()).toEqual([`lock:{${key}}:fence`]);
  });

  it('has no permit key: its hash, whose expiry is its lease, is renewed in its place, one by one and in a batch', async () => {
    const scripts = store();
    const key = uniqueKey();
    const keys = names(key, 2);
    expect(await scripts.semaphores.acquire(keys('a'), 'a', 300, true, WAITER_LEASE)).toMatchObject({ acquired: true });
    expect(await redis.exists(keys('a').lock)).toBe(0);
    expect(await redis.pttl(holdersOf(key))).toBeLessThanOrEqual(300);
    expect(await scripts.renew(keys('a').lock, 'a', 60_000)).toBe(true);
    expect(await redis.pttl(holdersOf(key))).toBeGreaterThan(30_000);
    // Beside a mutex and a missing lock, in one batch call, and made shorter (extend()).
    const mutex = `lock:{${uniqueKey()}}`;
    await redis.set(mutex, 'm', 'PX', 60_000);
    const batch = [
      { lockKey: mutex, token: 'm', ttl: 60_000 },
      { lockKey: keys('a').lock, token: 'a', ttl: 20_000 },
      { lockKey: names(uniqueKey(), 2)('z').lock, token: 'z', ttl: 20_000 },
    ];
    expect(await scripts.renewCodes(batch)).toEqual([RENEWED, RENEWED, GONE]);
    expect(await redis.pttl(holdersOf(key))).toBeLessThanOrEqual(20_000);
    expect(await redis.exists(keys('a').lock)).toBe(0);
    // Another token of the same semaphore is not renewed by the holder's hash.
    expect(await scripts.renewCode(keys('x').lock, 'x', 60_000)).toBe(GONE);
    expect(await scripts.renewCodes([{ lockKey: keys('x').lock, token: 'x', ttl: 60_000 }])).toEqual([GONE]);
    expect(await redis.pttl(holdersOf(key))).toBeLessThanOrEqual(20_000);
    expect(await scripts.semaphores.release(keys('a'), 'a', WAITER_LEASE)).toMatchObject({ released: true });
    expect((await redis.keys(`lock:{${key}}*`)).sort()).toEqual([`lock:{${key}}:fence`]);
  });

  it('refuses the renewal and the release of a holder alone whose lease ran out, and leaves the next holder alone', async () => {
    const scripts = store();
    const key = uniqueKey();
    const keys = names(key, 1);
    expect(await scripts.semaphores.acquire(keys('a'), 'a', 100, true, WAITER_LEASE)).toMatchObject({ acquired: true });
    while ((await redis.exists(holdersOf(key))) > 0) await sleep(20);
    expect(await scripts.renewCode(keys('a').lock, 'a', 60_000)).toBe(GONE);
    const b = await scripts.semaphores.acquire(keys('b'), 'b', 60_000, false, WAITER_LEASE);
    expect(b).toMatchObject({ acquired: true });
    expect(await scripts.renewCode(keys('a').lock, 'a', 60_000)).toBe(GONE);
    expect(await scripts.renewCodes([{ lockKey: keys('a').lock, token: 'a', ttl: 60_000 }])).toEqual([GONE]);
    // a's HDEL finds nothing, and the script it falls back on must not take b's permit for a's.
    expect(await scripts.semaphores.release(keys('a'), 'a', WAITER_LEASE)).toMatchObject({ released: false });
    expect(await redis.hget(holdersOf(key), ':used')).toBe('1');
    expect(await redis.hget(holdersOf(key), 'b')).toBe(`1:${(b as { fencingToken: number }).fencingToken}`);
    expect(await scripts.semaphores.acquire(keys('c'), 'c', 60_000, true, WAITER_LEASE)).toMatchObject({ acquired: false });
    expect(await scripts.renewCode(keys('a').lock, 'a', 60_000)).toBe(GONE);
    expect(await scripts.renew(keys('b').lock, 'b', 60_000)).toBe(true);
    expect(await scripts.semaphores.release(keys('b'), 'b', WAITER_LEASE)).toMatchObject({ released: true, grants: [{ token: 'c' }] });
    expect(await scripts.semaphores.release(keys('c'), 'c', WAITER_LEASE)).toMatchObject({ released: true });
    expect((await redis.keys(`lock:{${key}}*`)).sort()).toEqual([`lock:{${key}}:fence`]);
  });

  it('gets its permit key from the unfolding, with the lease it had left, and stays renewable and counted', async () => {
    const scripts = store();
    const key = uniqueKey();
    const keys = names(key, 2);
    expect(await scripts.semaphores.acquire(keys('a'), 'a', 60_000, true, WAITER_LEASE)).toMatchObject({ acquired: true });
    await redis.pexpire(holdersOf(key), 40_000);
    expect(await scripts.semaphores.acquire(keys('b'), 'b', 60_000, true, WAITER_LEASE)).toMatchObject({ acquired: true });
    expect(await redis.get(keys('a').lock)).toBe('a');
    const left = await redis.pttl(keys('a').lock);
    expect(left).toBeGreaterThan(0);
    expect(left).toBeLessThanOrEqual(40_000);
    expect(await redis.hget(holdersOf(key), ':used')).toBe('2');
    expect(await scripts.renew(keys('a').lock, 'a', 60_000)).toBe(true);
    expect(await redis.pttl(keys('a').lock)).toBeGreaterThan(40_000);
    expect(await scripts.semaphores.acquire(keys('c'), 'c', 60_000, false, WAITER_LEASE)).toMatchObject({ acquired: false });
    for (const token of ['a', 'b']) expect(await scripts.semaphores.release(keys(token), token, WAITER_LEASE)).toMatchObject({ released: true });
    expect((await redis.keys(`lock:{${key}}*`)).sort()).toEqual([`lock:{${key}}:fence`]);
  });

  it('frees the place of a holder alone that crashed, on its lease, a lease made shorter too', async () => {
    const scripts = store();
    const key = uniqueKey();
    const keys = names(key, 1);
    expect(await scripts.semaphores.acquire(keys('a'), 'a', 60_000, true, WAITER_LEASE)).toMatchObject({ acquired: true });
    expect(await scripts.renew(keys('a').lock, 'a', 200)).toBe(true);
    expect(await scripts.semaphores.acquire(keys('b'), 'b', 60_000, false, WAITER_LEASE)).toMatchObject({ acquired: false });
    // Shortened, then crashed: Redis' clock drops the permit key the refused caller's unfolding
    // wrote with the lease left, and the next caller gets the permit.
    while ((await redis.exists(keys('a').lock)) > 0) await sleep(20);
    expect(await scripts.semaphores.acquire(keys('b'), 'b', 60_000, false, WAITER_LEASE)).toMatchObject({ acquired: true });
    expect(await scripts.semaphores.release(keys('a'), 'a', WAITER_LEASE)).toMatchObject({ released: false });
    expect(await scripts.semaphores.release(keys('b'), 'b', WAITER_LEASE)).toMatchObject({ released: true });
    // Crashed without a renewal, never unfolded: the hash goes on Redis' clock.
    expect(await scripts.semaphores.acquire(keys('c'), 'c', 200, true, WAITER_LEASE)).toMatchObject({ acquired: true });
    while ((await redis.exists(holdersOf(key))) > 0) await sleep(20);
    const d = await scripts.semaphores.acquire(keys('d'), 'd', 60_000, false, WAITER_LEASE);
    expect(d).toMatchObject({ acquired: true });
    expect(await redis.hgetall(holdersOf(key))).toEqual({ '!d': `1:1:${(d as { fencingToken: number }).fencingToken}` });
    expect(await scripts.semaphores.release(keys('d'), 'd', WAITER_LEASE)).toMatchObject({ released: true });
    expect((await redis.keys(`lock:{${key}}*`)).sort()).toEqual([`lock:{${key}}:fence`]);
  });

  it('leaves through the script when its HDEL did not happen (a retry), and through the leave script', async () => {
    const scripts = store();
    const key = uniqueKey();
    const keys = names(key, 2);
    const a = keys('a');
    expect(await scripts.semaphores.acquire(a, 'a', 60_000, true, WAITER_LEASE)).toMatchObject({ acquired: true });
    expect(a.semaphore.lone).toBe(true);
    // As after a failed HDEL: the script alone, which unfolds the caller's own field first.
    a.semaphore.lone = false;
    expect(await scripts.semaphores.release(a, 'a', WAITER_LEASE)).toMatchObject({ released: true });
    expect((await redis.keys(`lock:{${key}}*`)).sort()).toEqual([`lock:{${key}}:fence`]);
    expect(await scripts.semaphores.acquire(keys('b'), 'b', 60_000, true, WAITER_LEASE)).toMatchObject({ acquired: true });
    await scripts.semaphores.leave(keys('b'), 'b', 60_000, WAITER_LEASE);
    expect((await redis.keys(`lock:{${key}}*`)).sort()).toEqual([`lock:{${key}}:fence`]);
  });

  it('never leaves a permit key or a due set without expiry when unfolded in the last millisecond of its lease', async () => {
    // Redis keeps a key through its last millisecond, where PTTL answers 0: a holder alone with a
    // 1 ms lease and a caller right behind it (written together) meet there now and then.
    const scripts = store();
    let unfolded = 0;
    for (let i = 0; i < 1_000; i++) {
      const key = uniqueKey();
      const keys = names(key, 1);
      const [a, b] = await Promise.all([
        scripts.semaphores.acquire(keys('a'), 'a', 1, true, WAITER_LEASE),
        scripts.semaphores.acquire(keys('b'), 'b', 60_000, false, WAITER_LEASE),
      ]);
      expect(a).toMatchObject({ acquired: true });
      if (!b.acquired) unfolded++;
      const [permit, due] = await Promise.all([redis.pttl(keys('a').lock), redis.pttl(`lock:{${key}}:due`)]);
      expect(permit, `try ${i}: a's permit key`).not.toBe(-1);
      expect(due, `try ${i}: the due set`).not.toBe(-1);
    }
    // The path was taken: b met a's hash and unfolded it (and was refused) in some tries.
    expect(unfolded).toBeGreaterThan(0);
  });

  it('is inspected with the lease its hash has left', async () => {
    const scripts = store();
    const key = uniqueKey();
    const keys = names(key, 3);
    expect(await scripts.semaphores.acquire(keys('a'), 'a', 60_000, true, WAITER_LEASE)).toMatchObject({ acquired: true });
    const snapshot = await scripts.inspectSemaphore(lockRedisKeys('lock:', key));
    expect(snapshot).toMatchObject({ limit: 3, waiters: 0, holders: [{ token: 'a', permits: 1 }] });
    expect(snapshot!.holders[0]!.pttl).toBeGreaterThan(30_000);
    expect(await scripts.semaphores.release(keys('a'), 'a', WAITER_LEASE)).toMatchObject({ released: true });
    expect(await scripts.inspectSemaphore(lockRedisKeys('lock:', key))).toBeNull();
  });

  it('is released by HDEL under the client\'s key prefix', async () => {
    const prefixed = new Redis(redisUrl(), { keyPrefix: 'pfx:', lazyConnect: false });
    try {
      const scripts = new LockScripts(prefixed);
      const key = uniqueKey();
      const keys = names(key, 2);
      expect(await scripts.semaphores.acquire(keys('a'), 'a', 60_000, true, WAITER_LEASE)).toMatchObject({ acquired: true });
      expect(await redis.hgetall(`pfx:${holdersOf(key)}`)).toMatchObject({ '!a': expect.stringMatching(/^1:2:\d+$/) });
      expect(await scripts.semaphores.release(keys('a'), 'a', WAITER_LEASE)).toMatchObject({ released: true });
      expect((await redis.keys(`pfx:lock:{${key}}*`)).sort()).toEqual([`pfx:lock:{${key}}:fence`]);
    } finally {
      prefixed.disconnect();
    }
  });
});

describe('a semaphore taken alone on a Cluster (every key declared)', () => {
  const redis = useRedis();

  /** The Cluster's scripts, run on one server: every key of a call is in one slot anyway. */
  const declared = () => {
    const driver = driverFor(redis);
    return new SemaphoreScripts((script, keys, args) => driver.evalScript(script, keys, args), () => '0:1000:0', true, (key, field) => driver.deleteField(key, field));
  };

  it('keeps the full layout and its permit key: a renewal, which declares the permit alone, is never sent away by a slot migration', async () => {
    const semaphores = declared();
    const key = uniqueKey();
    const keys = names(key, 2);
    const a = keys('a');
    expect(await semaphores.acquire(a, 'a', 60_000, true, WAITER_LEASE)).toMatchObject({ acquired: true });
    expect(a.semaphore.lone).toBe(false);
    expect(await redis.get(a.lock)).toBe('a');
    expect(await redis.hgetall(`lock:{${key}}:holders`)).toMatchObject({ a: expect.stringMatching(/^1:\d+$/), ':used': '1', ':limit': '2' });
    expect(await semaphores.release(a, 'a', WAITER_LEASE)).toMatchObject({ released: true });
    expect((await redis.keys(`lock:{${key}}*`)).sort()).toEqual([`lock:{${key}}:fence`]);
  });
});
