import { describe, expect, it } from 'vitest';
import { lockRedisKeys } from '../../lib/core/keys/lock-key.js';
import { readKeys } from '../../lib/core/rwlock/read-keys.js';
import type { AcquireReply, ReleaseReply } from '../../lib/core/stores/lock-store.js';
import { MemoryData, MemoryStore } from '../../lib/core/stores/memory/memory-store.js';
import { LockScripts } from '../../lib/core/stores/redis/lock-scripts.js';
import { ManualClock } from '../../lib/testing/manual-clock.js';
import { useRedis } from '../support/redis.js';
import { firstFailingSeed, random } from './differential.js';

/**
 * Added by review (twenty-ninth session), with no defect found: the read-write lock's Redis scripts (the read side's acquire, release
 * and leave; the write side is the mutex's) and the in-memory store, driven side by side through
 * random sequences of 40 steps, as the mutex's and the semaphore's differential specs do:
 * readers and writers asking with or without queueing, polling, leaving, lapsing as waiters,
 * releasing, crashing (their key gone), renewing. After every step both must have answered
 * alike and hold the same '~r' or owner, the same readers and the same queue.
 */
const LEASE = 600_000;
const WAITER_LEASE = 600_000;
const STEPS = 40;

type State = 'waiting' | 'holding' | 'gone';
interface Caller {
  token: string;
  read: boolean;
  state: State;
}

function outcome(reply: AcquireReply): object {
  if (reply.acquired) return { acquired: true };
  return { acquired: false, joined: reply.joined === true, pttl: reply.pttl < 0 ? reply.pttl : 'live' };
}

function released(reply: ReleaseReply): object {
  return { released: reply.released, grants: (reply.grants ?? (reply.grant ? [reply.grant] : [])).map((grant) => grant.token).sort() };
}

describe('the read-write lock scripts and the in-memory store', () => {
  const redis = useRedis();

  it('answer alike and hold the same owner, readers and queue, step after step', async () => {
    expect(await firstFailingSeed(runSequence)).toEqual([]);
  }, 300_000);

  async function runSequence(seed: number, log: string[]): Promise<void> {
    const rand = random(seed);
    const pick = <T>(items: T[]): T => items[Math.floor(rand() * items.length)]!;
    const key = `rw-agree-${process.pid}-${seed}`;
    const base = lockRedisKeys('lock:', key);
    const scripts = new LockScripts(redis);
    const clock = new ManualClock();
    const data = new MemoryData();
    const memory = new MemoryStore(data, clock, () => undefined);
    const callers: Caller[] = [];
    const keysOf = (caller: Caller) => (caller.read ? readKeys(base, caller.token, key) : base);
    const member = (caller: Caller) => `${caller.token}:${LEASE}${caller.read ? ':r' : ''}`;
    const redisNow = async (): Promise<number> => {
      const [seconds, micros] = await redis.time();
      return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    };

    const acquireOnBoth = async (caller: Caller, enqueue: boolean, what: string): Promise<AcquireReply> => {
      const [fromRedis, fromMemory] = caller.read
        ? [await scripts.readers.acquire(readKeys(base, caller.token, key), caller.token, LEASE, enqueue, WAITER_LEASE), await memory.readers.acquire(readKeys(base, caller.token, key), caller.token, LEASE, enqueue, WAITER_LEASE)]
        : [await scripts.acquire(base, caller.token, LEASE, enqueue, WAITER_LEASE), await memory.acquire(base, caller.token, LEASE, enqueue, WAITER_LEASE)];
      log.push(`  redis ${JSON.stringify(fromRedis)} memory ${JSON.stringify(fromMemory)}`);
      expect(outcome(fromMemory), `${what} answers alike`).toEqual(outcome(fromRedis));
      return fromRedis;
    };
    const grantedTo = (reply: ReleaseReply): void => {
      for (const grant of reply.grants ?? (reply.grant ? [reply.grant] : [])) {
        const to = callers.find((other) => other.token === grant.token);
        if (to !== undefined) to.state = 'holding';
      }
    };

    for (let step = 0; step < STEPS; step++) {
      const alive = callers.filter((caller) => caller.state !== 'gone');
      if (rand() < 0.35 || alive.length === 0) {
        const caller: Caller = { token: `t${callers.length + 1}`, read: rand() < 0.6, state: 'gone' };
        callers.push(caller);
        const enqueue = rand() < 0.75;
        log.push(`acquire ${caller.token} ${caller.read ? 'read' : 'write'} enqueue ${enqueue}`);
        const reply = await acquireOnBoth(caller, enqueue, 'acquire');
        caller.state = reply.acquired ? 'holding' : enqueue ? 'waiting' : 'gone';
      } else {
        const caller = pick(alive);
        const roll = rand();
        if (caller.state === 'waiting') {
          if (roll < 0.5) {
            log.push(`poll ${caller.token}`);
            if ((await acquireOnBoth(caller, true, 'poll')).acquired) caller.state = 'holding';
          } else if (roll < 0.8) {
            log.push(`leave ${caller.token}`);
            if (caller.read) {
              await scripts.readers.leave(readKeys(base, caller.token, key), caller.token, LEASE, WAITER_LEASE);
              await memory.readers.leave(readKeys(base, caller.token, key), caller.token, LEASE, WAITER_LEASE);
            } else {
              await scripts.leave(base, caller.token, LEASE, WAITER_LEASE);
              await memory.leave(base, caller.token, LEASE, WAITER_LEASE);
            }
            caller.state = 'gone';
          } else {
            // Lapsed long ago (past any grace), or a moment ago (a writer then keeps its place while readers hold).
            const ago = rand() < 0.5 ? 3 * WAITER_LEASE : 1_000;
            log.push(`waiter ${caller.token} lapses ${ago} ms ago`);
            await redis.zadd(base.waiters, 'XX', (await redisNow()) - ago, member(caller));
            const queue = data.waiting.get(base.queue);
            if (queue?.value.aliveUntil.has(member(caller))) queue.value.aliveUntil.set(member(caller), clock.now() - ago);
          }
        } else if (roll < 0.5) {
          log.push(`release ${caller.token}`);
          const [fromRedis, fromMemory] = caller.read
            ? [await scripts.readers.release(readKeys(base, caller.token, key), caller.token, WAITER_LEASE), await memory.readers.release(readKeys(base, caller.token, key), caller.token, WAITER_LEASE)]
            : [await scripts.release(base, caller.token, WAITER_LEASE), await memory.release(base, caller.token, WAITER_LEASE)];
          log.push(`  redis ${JSON.stringify(fromRedis)} memory ${JSON.stringify(fromMemory)}`);
          expect(released(fromMemory), 'release answers alike').toEqual(released(fromRedis));
          grantedTo(fromRedis);
          caller.state = 'gone';
        } else if (roll < 0.7) {
          log.push(`crash ${caller.token}`);
          await redis.del(keysOf(caller).lock);
          data.locks.delete(keysOf(caller).lock);
          caller.state = 'gone';
        } else {
          log.push(`renew ${caller.token}`);
          const fromRedis = await scripts.renew(keysOf(caller).lock, caller.token, LEASE);
          const fromMemory = await memory.renew(keysOf(caller).lock, caller.token, LEASE);
          log.push(`  redis ${JSON.stringify(fromRedis)} memory ${JSON.stringify(fromMemory)}`);
          expect(fromMemory, 'renew answers alike').toEqual(fromRedis);
        }
      }
      const live = <T>(entry: { value: T; expiresAt: number } | undefined): T | undefined => (entry !== undefined && entry.expiresAt >= clock.now() ? entry.value : undefined);
      const readerKeys = await redis.keys(`${base.lock}:reader:*`);
      const state = {
        owner: await redis.get(base.lock),
        readers: (await redis.hkeys(`${base.lock}:readers`)).sort(),
        readerKeys: readerKeys.map((name) => name.slice(`${base.lock}:reader:`.length)).sort(),
        queue: await redis.lrange(base.queue, 0, -1),
        waiters: (await redis.zrange(base.waiters, 0, -1)).sort(),
      };
      const memoryQueue = live(data.waiting.get(base.queue));
      const memoryState = {
        owner: live(data.locks.get(base.lock)) ?? null,
        readers: [...(live(data.readers.get(`${base.lock}:readers`))?.keys() ?? [])].sort(),
        readerKeys: [...data.locks.keys()].filter((name) => name.startsWith(`${base.lock}:reader:`) && live(data.locks.get(name)) !== undefined).map((name) => name.slice(`${base.lock}:reader:`.length)).sort(),
        queue: memoryQueue?.order ?? [],
        waiters: [...(memoryQueue?.aliveUntil.keys() ?? [])].sort(),
      };
      log.push(`  state ${JSON.stringify(state)}`);
      expect(memoryState, 'the same keys').toEqual(state);
      if (state.owner !== null && state.owner !== '~r') {
        const holder = callers.find((caller) => caller.token === state.owner);
        if (holder !== undefined) holder.state = 'holding';
      }
      for (const token of state.readerKeys) {
        const holder = callers.find((caller) => caller.token === token);
        if (holder !== undefined) holder.state = 'holding';
      }
    }
  }
});
