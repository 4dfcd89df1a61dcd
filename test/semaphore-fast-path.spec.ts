import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { lockRedisKeys } from '../lib/core/keys/lock-key.js';
import { semaphoreKeys } from '../lib/core/semaphore/semaphore-keys.js';
import { LockScripts } from '../lib/core/stores/redis/lock-scripts.js';
import { sleep, useLockApps } from './support/lock-app.js';
import { isScriptCall, watchCommands } from './support/monitor.js';
import { useRedis } from './support/redis.js';

const uniqueKey = () => `semfast-${randomUUID().slice(0, 8)}`;
const WAITER_LEASE = 1_000;

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
    const calls = permits.seen.filter(isScriptCall);
    expect(calls.map((command) => command.args[2])).toEqual(['1', '1']);
    // Nobody waits: the holders hash says so (no ':queued' mark), so the queue keys are not read.
    expect(queue).toEqual([]);
    // The holders hash read once and written once by each, deleted with the permit (one DEL); the
    // due set never named: a holder let in by the fast path is scored by the first count that
    // needs it (see the next tests), and without such a count there is no due set to delete.
    expect(holders).toEqual(['HMGET', 'HSET', 'PEXPIRE', 'HMGET', 'DEL']);
    expect(due).toEqual([]);
    // The permit: created with SET NX and deleted (its name holds the owner's token: a DEL that
    // deletes it proves the owner); no holder's lease read (no PTTL).
    expect(permits.seen.filter((command) => !isScriptCall(command)).map((command) => command.args[0]!.toUpperCase())).toEqual(['SET', 'DEL']);
    expect((await redis.keys(`${root}*`)).sort()).toEqual([`${root}:fence`]);
  });

  it('lets a holder out beside others without naming the due set, which nobody wrote', async () => {
    const { locks } = await app();
    const key = uniqueKey();
    const due = await watchCommands(`lock:{${key}}:due`);
    const first = await locks.acquire(key, { limit: 3 });
    const second = await locks.acquire(key, { limit: 3 });
    await first.release();
    expect(await redis.hget(`lock:{${key}}:holders`, ':used')).toBe('1');
    await second.release();
    await due.stop();
    expect(due.seen).toEqual([]);
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
  const names = (key: string, limit: number) => (token: string) => semaphoreKeys(lockRedisKeys('lock:', key), token, key, limit, 1);

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
  const names = (key: string, limit: number, permits = 1) => (token: string) => semaphoreKeys(lockRedisKeys('lock:', key), token, key, limit, permits);
  /** Commands that name the queue keys from now on: the fast paths name neither. */
  const watchQueue = async (key: string) => {
    const root = `lock:{${key}}`;
    return watchCommands(`${root}:sq`, undefined, (arg) => arg === `${root}:sq` || arg === `${root}:sw`);
  };
  /** A holder let in for 200 ms that never renews: returns its fencing token once Redis dropped its permit. */
  const lapse = async (scripts: LockScripts, keys: ReturnType<typeof names>, token: string) => {
    const reply = await scripts.semaphores.acquire(keys(token), token, 200, true, WAITER_LEASE);
    expect(reply).toMatchObject({ acquired: true });
    while ((await redis.exists(keys(token).lock)) > 0) await sleep(20);
    return (reply as { fencingToken: number }).fencingToken;
  };

  it('keeps a newcomer behind a waiter although its permit fits, and serves the waiter on release', async () => {
    const scripts = store();
    const key = uniqueKey();
    const one = names(key, 2);
    const two = names(key, 2, 2);
    expect(await scripts.semaphores.acquire(one('holder'), 'holder', 60_000, true, WAITER_LEASE)).toMatchObject({ acquired: true });
    expect(await scripts.semaphores.acquire(two('big'), 'big', 60_000, true, WAITER_LEASE)).toMatchObject({ acquired: false });
    expect(await redis.hget(`lock:{${key}}:holders`, ':queued')).toBe('1');
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
    expect(await redis.hget(`lock:{${key}}:holders`, ':queued')).toBe('1');
    // The stale mark sends this release the full way, which finds nobody waiting and drops it.
    expect(await scripts.semaphores.release(keys('a'), 'a', lease)).toMatchObject({ released: true, grants: [] });
    expect(await redis.hget(`lock:{${key}}:holders`, ':queued')).toBeNull();
    const queue = await watchQueue(key);
    expect(await scripts.semaphores.acquire(keys('c'), 'c', 60_000, true, lease)).toMatchObject({ acquired: true });
    await queue.stop();
    expect(queue.seen).toEqual([]);
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

  it('answers "not yours" to the last holder whose lease ran out, and leaves nothing behind', async () => {
    const scripts = store();
    const key = uniqueKey();
    const keys = names(key, 2);
    const lapsed = await lapse(scripts, keys, 'lapsed');
    expect(await scripts.semaphores.release(keys('lapsed'), 'lapsed', WAITER_LEASE)).toMatchObject({ released: false });
    expect((await redis.keys(`lock:{${key}}*`)).sort()).toEqual([`lock:{${key}}:fence`]);
    const next = await scripts.semaphores.acquire(keys('next'), 'next', 60_000, true, WAITER_LEASE);
    expect(next).toMatchObject({ acquired: true, fencingToken: lapsed + 1 });
    expect(await redis.hget(`lock:{${key}}:holders`, ':used')).toBe('1');
    expect(await scripts.semaphores.release(keys('next'), 'next', WAITER_LEASE)).toMatchObject({ released: true });
  });
});
