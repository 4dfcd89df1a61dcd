import { describe, expect, it } from 'vitest';
import { lockRedisKeys, wantedKey } from '../../lib/core/keys/lock-key.js';
import type { AcquireReply, Enqueue, ReleaseReply } from '../../lib/core/stores/lock-store.js';
import { MemoryData, MemoryStore } from '../../lib/core/stores/memory/memory-store.js';
import { LockScripts } from '../../lib/core/stores/redis/lock-scripts.js';
import { ManualClock } from '../../lib/testing/manual-clock.js';
import { useRedis } from '../support/redis.js';
import { firstFailingSeed, random } from './differential.js';

/**
 * The mutex's Redis scripts (acquire, release with and without parking, leave, renew) and the
 * in-memory store driven side by side through random sequences of 40 steps: callers asking
 * without waiting, queueing (FIFO) or saying they wait (barging), polling, leaving, lapsing as
 * waiters, releasing (some parking the lock for a new token), taking a grant, giving it back,
 * crashing (the lock gone), renewing. After every step both stores must have answered alike and
 * hold the same owner, the same queue in the same order, the same `wanted` flag, and fencing
 * counters that moved alike. Leases are long and the manual clock stands still.
 * `SEEDS=2000 npx vitest run <this file>` runs a long form.
 */
const LEASE = 600_000;
const WAITER_LEASE = 600_000;
const STEPS = 40;

type State = 'waiting' | 'barging' | 'holding' | 'gone';
interface Caller {
  token: string;
  state: State;
  granted: boolean;
}

function outcome(reply: AcquireReply): object {
  if (reply.acquired) return { acquired: true };
  return { acquired: false, joined: reply.joined === true, pttl: reply.pttl < 0 ? reply.pttl : 'live' };
}

function released(reply: ReleaseReply): object {
  return { released: reply.released, grant: reply.grant?.token, parked: reply.parked === undefined ? undefined : { contended: reply.parked.contended } };
}

describe('the mutex scripts and the in-memory store', () => {
  const redis = useRedis();

  it('answer alike and hold the same owner, queue and flags, step after step', async () => {
    expect(await firstFailingSeed(runSequence)).toEqual([]);
  }, 120_000);

  async function runSequence(seed: number, log: string[]): Promise<void> {
    const rand = random(seed);
    const pick = <T>(items: T[]): T => items[Math.floor(rand() * items.length)]!;
    const keys = lockRedisKeys('lock:', `agree-${seed}`);
    const scripts = new LockScripts(redis);
    const clock = new ManualClock();
    const data = new MemoryData();
    const memory = new MemoryStore(data, clock, () => undefined);
    const callers: Caller[] = [];
    let firstFence: { redis: number; memory: number } | undefined;

    const newCaller = (): Caller => {
      const caller: Caller = { token: `t${callers.length + 1}`, state: 'gone', granted: false };
      callers.push(caller);
      return caller;
    };
    const acquireOnBoth = async (caller: Caller, enqueue: Enqueue, what: string): Promise<AcquireReply> => {
      const fromRedis = await scripts.acquire(keys, caller.token, LEASE, enqueue, WAITER_LEASE);
      const fromMemory = await memory.acquire(keys, caller.token, LEASE, enqueue, WAITER_LEASE);
      log.push(`  redis ${JSON.stringify(fromRedis)} memory ${JSON.stringify(fromMemory)}`);
      expect(outcome(fromMemory), `${what} answers alike`).toEqual(outcome(fromRedis));
      return fromRedis;
    };
    const leaveOnBoth = async (caller: Caller): Promise<void> => {
      await scripts.leave(keys, caller.token, LEASE, WAITER_LEASE);
      await memory.leave(keys, caller.token, LEASE, WAITER_LEASE);
      caller.state = 'gone';
    };
    const redisNow = async (): Promise<number> => {
      const [seconds, micros] = await redis.time();
      return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    };
    const granted = (reply: ReleaseReply): void => {
      if (reply.grant === undefined) return;
      const to = callers.find((other) => other.token === reply.grant!.token);
      if (to !== undefined) Object.assign(to, { state: 'holding', granted: true });
    };

    for (let step = 0; step < STEPS; step++) {
      const alive = callers.filter((caller) => caller.state !== 'gone');
      const expiry = rand();
      if (expiry < 0.05) {
        // The whole queue outlives its last refresh (its keys expire together), or the barging flag does.
        const what = rand() < 0.6 ? 'queue' : 'wanted';
        log.push(`the ${what} expires`);
        if (what === 'queue') {
          await redis.pexpire(keys.queue, 1);
          await redis.pexpire(keys.waiters, 1);
          const entry = data.waiting.get(keys.queue);
          if (entry !== undefined) entry.expiresAt = clock.now() - 1;
        } else {
          await redis.pexpire(wantedKey(keys.lock), 1);
          const entry = data.wanted.get(wantedKey(keys.lock));
          if (entry !== undefined) entry.expiresAt = clock.now() - 1;
        }
        await new Promise((resolve) => setTimeout(resolve, 3));
        for (const caller of callers) if (caller.state === 'waiting' || caller.state === 'barging') caller.state = 'gone';
        continue;
      }
      if (expiry < 0.1) {
        // The holder's lease runs out (the key expires, read lazily by both).
        log.push('the lock expires');
        await redis.pexpire(keys.lock, 1);
        const entry = data.locks.get(keys.lock);
        if (entry !== undefined) entry.expiresAt = clock.now() - 1;
        await new Promise((resolve) => setTimeout(resolve, 3));
        for (const caller of callers) if (caller.state === 'holding') caller.state = 'gone';
        continue;
      }
      if (rand() < 0.3 || alive.length === 0) {
        const caller = newCaller();
        const roll = rand();
        const enqueue: Enqueue = roll < 0.6 ? true : roll < 0.8 ? 'barging' : false;
        log.push(`acquire ${caller.token} enqueue ${String(enqueue)}`);
        const reply = await acquireOnBoth(caller, enqueue, 'acquire');
        caller.state = reply.acquired ? 'holding' : enqueue === true ? 'waiting' : enqueue === 'barging' ? 'barging' : 'gone';
      } else {
        const caller = pick(alive);
        const roll = rand();
        if (caller.state === 'waiting' || caller.state === 'barging') {
          if (roll < 0.5) {
            log.push(`poll ${caller.token} (${caller.state})`);
            if ((await acquireOnBoth(caller, caller.state === 'waiting' ? true : 'barging', 'poll')).acquired) caller.state = 'holding';
          } else if (roll < 0.75) {
            log.push(`leave ${caller.token}`);
            await leaveOnBoth(caller);
          } else {
            log.push(`waiter ${caller.token} lapses`);
            const member = `${caller.token}:${LEASE}`;
            await redis.zadd(keys.waiters, 'XX', (await redisNow()) - 1000, member);
            const queue = data.waiting.get(keys.queue);
            if (queue?.value.aliveUntil.has(member)) queue.value.aliveUntil.set(member, clock.now() - 1000);
          }
        } else if (roll < 0.45) {
          const park = rand() < 0.4 ? newCaller() : undefined;
          log.push(`release ${caller.token}${park ? ` parking for ${park.token}` : ''}`);
          const request = park === undefined ? undefined : { token: park.token, ttl: LEASE };
          const fromRedis = await scripts.release(keys, caller.token, WAITER_LEASE, request);
          const fromMemory = await memory.release(keys, caller.token, WAITER_LEASE, request);
          log.push(`  redis ${JSON.stringify(fromRedis)} memory ${JSON.stringify(fromMemory)}`);
          expect(released(fromMemory), 'release answers alike').toEqual(released(fromRedis));
          granted(fromRedis);
          if (park !== undefined && fromRedis.parked !== undefined) park.state = 'holding';
          caller.state = 'gone';
        } else if (roll < 0.6 && caller.granted) {
          log.push(`take the grant of ${caller.token}`);
          await acquireOnBoth(caller, true, 'a granted waiter asking');
          caller.granted = false;
        } else if (roll < 0.7 && caller.granted) {
          log.push(`give the grant of ${caller.token} back`);
          await leaveOnBoth(caller);
        } else if (roll < 0.8) {
          log.push(`crash ${caller.token}`);
          await redis.del(keys.lock);
          data.locks.delete(keys.lock);
          caller.state = 'gone';
        } else {
          log.push(`renew ${caller.token}`);
          const fromRedis = await scripts.renew(keys.lock, caller.token, LEASE);
          const fromMemory = await memory.renew(keys.lock, caller.token, LEASE);
          log.push(`  redis ${JSON.stringify(fromRedis)} memory ${JSON.stringify(fromMemory)}`);
          expect(fromMemory, 'renew answers alike').toEqual(fromRedis);
        }
      }
      // Compare what each store holds.
      const owner = await redis.get(keys.lock);
      // Read as the store reads them: an expired key is gone.
      const live = <T>(entry: { value: T; expiresAt: number } | undefined): T | undefined => (entry !== undefined && entry.expiresAt >= clock.now() ? entry.value : undefined);
      const memoryOwner = live(data.locks.get(keys.lock)) ?? null;
      const queue = await redis.lrange(keys.queue, 0, -1);
      const waiters = (await redis.zrange(keys.waiters, 0, -1)).sort();
      const memoryQueue = live(data.waiting.get(keys.queue));
      const wanted = (await redis.exists(wantedKey(keys.lock))) === 1;
      const memoryWanted = live(data.wanted.get(wantedKey(keys.lock))) !== undefined;
      const fence = await redis.get(keys.fence);
      const memoryFence = data.fences.get(keys.fence)?.value;
      if (firstFence === undefined && fence !== null && memoryFence !== undefined) firstFence = { redis: Number(fence), memory: memoryFence };
      const state = {
        owner,
        queue,
        waiters,
        wanted,
        fence: fence === null || firstFence === undefined ? null : Number(fence) - firstFence.redis,
      };
      const memoryState = {
        owner: memoryOwner,
        queue: memoryQueue?.order ?? [],
        waiters: [...(memoryQueue?.aliveUntil.keys() ?? [])].sort(),
        wanted: memoryWanted,
        fence: memoryFence === undefined || firstFence === undefined ? null : memoryFence - firstFence.memory,
      };
      log.push(`  state ${JSON.stringify(state)}`);
      expect(memoryState, 'the same keys').toEqual(state);
      if (owner !== null) {
        const holder = callers.find((caller) => caller.token === owner);
        if (holder !== undefined && holder.state !== 'holding') Object.assign(holder, { state: 'holding', granted: true });
      }
    }
  }
});
