import { randomUUID } from 'node:crypto';
import { describe, expect, it, onTestFinished } from 'vitest';
import { COMMANDS } from '../lib/core/stores/redis/lock-lua.js';
import { useLockApps } from './support/lock-app.js';
import { isScriptCall, lockScriptKind, watchCommands } from './support/monitor.js';
import { useRedis } from './support/redis.js';

const uniqueKey = () => `fast-${randomUUID().slice(0, 8)}`;

/**
 * The scripts' fast path: a free lock nobody waits for costs Redis EXISTS + SET NX PX + INCR,
 * a release nobody waits for GET + DEL + EXISTS. These tests pin down that it is taken only
 * when it is safe, and that it skips the queue work.
 */
describe('uncontended acquire and release', () => {
  const redis = useRedis();
  const app = useLockApps();

  it('touch the waiting queue with nothing but EXISTS', async () => {
    const { locks } = await app();
    // Have the scripts cached on the server first (a NOSCRIPT reply makes one more call).
    await (await locks.acquire(uniqueKey())).release();
    const key = uniqueKey();
    const onLock = await watchCommands(`lock:{${key}}`);
    onTestFinished(() => onLock.stop());
    const onQueue = await watchCommands(`lock:{${key}}:queue`);
    onTestFinished(() => onQueue.stop());
    const lock = await locks.acquire(key);
    await lock.release();
    await Promise.all([onLock.stop(), onQueue.stop()]);
    // One script call each; outside a Cluster they name the lock alone (four arguments fewer).
    expect(onLock.seen.filter(isScriptCall).map(lockScriptKind)).toEqual(['acquire', 'release']);
    expect(onLock.seen.filter(isScriptCall).map((command) => command.args[2])).toEqual(['1', '1']);
    // Inside them, only the two existence checks touch the queue.
    expect(onQueue.seen.map((command) => command.args[0]!.toUpperCase())).toEqual(['EXISTS', 'EXISTS']);
    expect((await redis.keys(`lock:{${key}}*`)).sort()).toEqual([`lock:{${key}}:fence`]);
  });

  it('answer with one integer each, not an array (Redis writes it in one write, the client parses no array)', async () => {
    const lock = `lock:{${uniqueKey()}}`;
    const acquire = (owner: string) => redis.eval(COMMANDS.acquireOneKey.lua, 1, lock, owner, 30_000, '0:1000:0:0');
    const release = (owner: string) => redis.eval(COMMANDS.releaseOneKey.lua, 1, lock, owner, '0:1000:0');
    await redis.set(`${lock}:fence`, '10'); // a key locked ten times before: tokens 11 to 13 below
    // The fencing token alone, on the fast path and when the owner asks again (the next token
    // then, as for a first grant: the counter may be a same-named semaphore's since).
    expect(await acquire('owner')).toBe(11);
    expect(await acquire('owner')).toBe(12);
    // A busy lock still answers `{0, pttl, fence, joined}` (a caller that does not queue joins nothing).
    expect(await acquire('rival')).toEqual([0, expect.any(Number), 12, 0]);
    expect(await release('rival')).toBe(0);
    expect(await release('owner')).toBe(1);
    expect(await acquire('next')).toBe(13);
    await release('next');
  });

  it('say in a busy reply whether the call queued the caller anew: 1 when it joined, 0 when it refreshed its place', async () => {
    const lock = `lock:{${uniqueKey()}}`;
    const acquire = (owner: string, enqueue: string) => redis.eval(COMMANDS.acquireOneKey.lua, 1, lock, owner, 30_000, `0:1000:0:${enqueue}`);
    await redis.set(`${lock}:fence`, '10');
    expect(await acquire('owner', '0')).toBe(11);
    expect(await acquire('waiter', '1')).toEqual([0, expect.any(Number), 11, 1]);
    expect(await acquire('waiter', '1')).toEqual([0, expect.any(Number), 11, 0]);
    // Its place lost (Redis lost the queue), the next call queues it anew, and says so.
    await redis.del(`${lock}:queue`, `${lock}:waiters`);
    expect(await acquire('waiter', '1')).toEqual([0, expect.any(Number), 11, 1]);
    await redis.del(lock, `${lock}:fence`, `${lock}:queue`, `${lock}:waiters`);
  });

  it('work after Redis lost its script cache (a restart, a failover, SCRIPT FLUSH)', async () => {
    const { locks } = await app();
    const key = uniqueKey();
    const first = await locks.acquire(key);
    await first.release();
    // Other test files on this server just fall back to EVAL once as well.
    await redis.script('FLUSH');
    const commands = await watchCommands(`lock:{${key}}`);
    onTestFinished(() => commands.stop());
    const again = await locks.acquire(key);
    await again.release();
    await commands.stop();
    expect(again.fencingToken).toBe(first.fencingToken + 1);
    expect(await redis.exists(`lock:{${key}}`)).toBe(0);
    // EVALSHA was refused, EVAL ran the script and cached it again.
    const scriptCalls = commands.seen.filter(isScriptCall).map((command) => command.args[0]!.toLowerCase());
    expect(scriptCalls).toContain('eval');
  });

  it('do not let a newcomer take a free lock ahead of a live waiter', async () => {
    const { locks } = await app();
    const key = uniqueKey();
    // A waiter is queued while the lock is free: its holder's lease ran out a moment ago and
    // the waiter has not polled yet.
    const [seconds, micros] = await redis.time();
    const serverNow = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    await redis.rpush(`lock:{${key}}:queue`, 'first-waiter:30000');
    await redis.zadd(`lock:{${key}}:waiters`, serverNow + 60_000, 'first-waiter:30000');
    await redis.set(`lock:{${key}}:fence`, '10');
    expect(await locks.tryAcquire(key)).toBeNull();
    // The newcomer's attempt handed the lock to the waiter whose turn it was, under the next token.
    expect(await redis.get(`lock:{${key}}`)).toBe('first-waiter');
    expect(await redis.get(`lock:{${key}}:fence`)).toBe('11');
  });

  it('still hand the lock to a waiter when one is queued at release', async () => {
    const holder = await app({ ttl: 30_000 });
    const waiter = await app({ ttl: 30_000 });
    const key = uniqueKey();
    const held = await holder.locks.acquire(key);
    const waiting = waiter.locks.acquire(key, { waitTimeout: 10_000 });
    // Wait until the waiter has joined the queue, then release.
    while ((await redis.exists(`lock:{${key}}:queue`)) === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    await held.release();
    const lock = await waiting;
    // The grant's token, or the next one when the release came before the waiter's subscription
    // and its next attempt confirmed the grant.
    expect(lock.fencingToken).toBeGreaterThan(held.fencingToken);
    await lock.release();
    expect(await redis.exists(`lock:{${key}}`, `lock:{${key}}:queue`, `lock:{${key}}:waiters`)).toBe(0);
  });
});
