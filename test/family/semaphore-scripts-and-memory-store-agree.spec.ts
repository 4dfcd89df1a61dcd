import { describe, expect, it } from 'vitest';
import { lockRedisKeys } from '../../lib/core/keys/lock-key.js';
import { semaphoreKeys, type SemaphoreKeys } from '../../lib/core/semaphore/semaphore-keys.js';
import { inspectSemaphoreInMemory } from '../../lib/core/semaphore/semaphore-inspect.js';
import type { SemaphoreAcquireReply } from '../../lib/core/semaphore/semaphore-store.js';
import { MemoryData, MemoryStore } from '../../lib/core/stores/memory/memory-store.js';
import { LockScripts } from '../../lib/core/stores/redis/lock-scripts.js';
import { ManualClock } from '../../lib/testing/manual-clock.js';
import { useRedis } from '../support/redis.js';
import { firstFailingSeed, random } from './differential.js';

/**
 * The semaphore's Redis scripts and the in-memory store (`nestjs-redis-lock/testing`, a product
 * that must behave as Redis does) driven side by side through random sequences of 40 steps
 * (written by a review, which ran 4,000 of them): callers asking with the common limit or
 * another one, 1 to 3 permits, queueing or not, polling, leaving, lapsing as waiters (within the
 * grace and past it), releasing, taking a grant again, giving a grant back, crashing (the
 * permit gone), renewing. After every step both stores must have answered alike and hold the
 * same holders with the same permits, and Redis never more permits than the limit. Leases are
 * long and the manual clock stands still: time running out is the behaviour suite's business.
 * `SEEDS=4000 npx vitest run <this file>` runs the review's long form.
 */
const LEASE = 600_000;
const WAITER_LEASE = 600_000;
const STEPS = 40;

type State = 'waiting' | 'holding' | 'gone';
interface Caller {
  token: string;
  limit: number;
  permits: number;
  state: State;
  keys: SemaphoreKeys;
  /** Whether it holds by a grant a release handed it (not by its own acquire). */
  granted: boolean;
}

/** What both stores must agree on in an acquire's answer (the fencing token and pttl differ by clock). */
function outcome(reply: SemaphoreAcquireReply): object {
  if (reply.acquired) return { acquired: true };
  if ('limitInUse' in reply) return { limitInUse: reply.limitInUse };
  return { acquired: false, joined: reply.joined };
}

describe('the semaphore scripts and the in-memory store', () => {
  const redis = useRedis();

  it('answer alike, hold the same holders and never exceed the limit, step after step', async () => {
    expect(await firstFailingSeed(runSequence)).toEqual([]);
  }, 120_000);

  async function runSequence(seed: number, log: string[]): Promise<void> {
    const rand = random(seed);
    const pick = <T>(items: T[]): T => items[Math.floor(rand() * items.length)]!;
    const key = `agree-${seed}`;
    const base = lockRedisKeys('lock:', key);
    const scripts = new LockScripts(redis);
    const clock = new ManualClock();
    const data = new MemoryData();
    const memory = new MemoryStore(data, clock, () => undefined);
    const onRedis = scripts.semaphores;
    const inMemory = memory.semaphores;
    const commonLimit = pick([1, 2, 3, 4]);
    const callers: Caller[] = [];

    const newCaller = (): Caller => {
      const token = `t${callers.length + 1}`;
      const limit = rand() < 0.1 ? pick([1, 2, 3, 4, 5]) : commonLimit;
      const permits = 1 + Math.floor(rand() * Math.min(limit, 3));
      const caller: Caller = { token, limit, permits, state: 'gone', keys: semaphoreKeys(base, token, key, limit, permits), granted: false };
      callers.push(caller);
      return caller;
    };
    const acquireOnBoth = async (caller: Caller, enqueue: boolean, what: string): Promise<SemaphoreAcquireReply> => {
      const fromRedis = await onRedis.acquire(caller.keys, caller.token, LEASE, enqueue, WAITER_LEASE);
      const fromMemory = await inMemory.acquire(caller.keys, caller.token, LEASE, enqueue, WAITER_LEASE);
      log.push(`  redis ${JSON.stringify(fromRedis)} memory ${JSON.stringify(fromMemory)}`);
      expect(outcome(fromMemory), `${what} answers alike`).toEqual(outcome(fromRedis));
      return fromRedis;
    };
    const leaveOnBoth = async (caller: Caller): Promise<void> => {
      await onRedis.leave(caller.keys, caller.token, LEASE, WAITER_LEASE);
      await inMemory.leave(caller.keys, caller.token, LEASE, WAITER_LEASE);
      caller.state = 'gone';
    };
    const redisNow = async (): Promise<number> => {
      const [seconds, micros] = await redis.time();
      return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    };
    /** Each store's live holders (token -> permits), and the limit Redis keeps. */
    const holders = async (): Promise<{ redis: Record<string, number>; memory: Record<string, number>; limit: number | undefined }> => {
      const fields = await redis.hgetall(`${base.lock}:holders`);
      const onServer: Record<string, number> = {};
      let limit: number | undefined;
      for (const [field, value] of Object.entries(fields)) {
        if (field.startsWith('!')) {
          // A holder alone: its field is its permit ('<permits>:<limit>').
          const [permits, alone] = value.split(':');
          onServer[field.slice(1)] = Number(permits);
          limit = Number(alone);
        } else if (field === ':limit') {
          limit = Number(value);
        } else if (!field.startsWith(':') && (await redis.exists(`${base.lock}:permit:${field}`)) === 1) {
          onServer[field] = Number(value.split(':')[0]);
        }
      }
      const snapshot = await inspectSemaphoreInMemory(data, clock, base);
      const inStore: Record<string, number> = {};
      for (const holder of snapshot?.holders ?? []) inStore[holder.token] = holder.permits;
      return { redis: onServer, memory: inStore, limit };
    };

    for (let step = 0; step < STEPS; step++) {
      const live = callers.filter((caller) => caller.state !== 'gone');
      if (rand() < 0.3 || live.length === 0) {
        const caller = newCaller();
        const enqueue = rand() < 0.7;
        log.push(`acquire ${caller.token} limit ${caller.limit} permits ${caller.permits} enqueue ${enqueue}`);
        const reply = await acquireOnBoth(caller, enqueue, 'acquire');
        caller.state = reply.acquired ? 'holding' : enqueue && !('limitInUse' in reply) ? 'waiting' : 'gone';
      } else {
        const caller = pick(live);
        const roll = rand();
        if (caller.state === 'waiting') {
          if (roll < 0.5) {
            log.push(`poll ${caller.token}`);
            if ((await acquireOnBoth(caller, true, 'poll')).acquired) caller.state = 'holding';
          } else if (roll < 0.75) {
            log.push(`leave ${caller.token}`);
            await leaveOnBoth(caller);
          } else {
            // Its liveness lapses: within the grace a waiter keeps its place, past it not.
            const long = rand() < 0.5;
            log.push(`waiter ${caller.token} lapses ${long ? 'past' : 'within'} the grace`);
            const member = `${caller.token}:${LEASE}:${caller.permits}`;
            await redis.zadd(`${base.lock}:sw`, 'XX', long ? (await redisNow()) - 3 * WAITER_LEASE : (await redisNow()) - 1000, member);
            const queue = data.waiting.get(caller.keys.queue);
            if (queue?.value.aliveUntil.has(member)) queue.value.aliveUntil.set(member, long ? clock.now() - 3 * WAITER_LEASE : clock.now() - 1000);
          }
        } else if (roll < 0.5) {
          log.push(`release ${caller.token}`);
          const fromRedis = await onRedis.release(caller.keys, caller.token, WAITER_LEASE);
          const fromMemory = await inMemory.release(caller.keys, caller.token, WAITER_LEASE);
          log.push(`  redis ${JSON.stringify(fromRedis)} memory ${JSON.stringify(fromMemory)}`);
          expect({ released: fromMemory.released, grants: fromMemory.grants.map((grant) => grant.token) }, 'release answers alike').toEqual({
            released: fromRedis.released,
            grants: fromRedis.grants.map((grant) => grant.token),
          });
          for (const grant of fromRedis.grants) {
            const granted = callers.find((other) => other.token === grant.token);
            if (granted !== undefined) Object.assign(granted, { state: 'holding', granted: true });
          }
          caller.state = 'gone';
        } else if (roll < 0.65 && caller.granted) {
          log.push(`take the grant of ${caller.token}`);
          await acquireOnBoth(caller, true, 'a granted waiter asking');
          caller.granted = false;
        } else if (roll < 0.75 && caller.granted) {
          log.push(`give the grant of ${caller.token} back`);
          await leaveOnBoth(caller);
        } else if (roll < 0.85) {
          // Its process crashed and its lease ran out: the permit is gone, counted again as due.
          log.push(`crash ${caller.token}`);
          const holdersKey = `${base.lock}:holders`;
          if ((await redis.hexists(holdersKey, `!${caller.token}`)) === 1) {
            await redis.del(holdersKey);
          } else {
            await redis.del(caller.keys.lock);
            await redis.zadd(`${base.lock}:due`, 'XX', 0, caller.token);
          }
          data.locks.delete(caller.keys.lock);
          caller.state = 'gone';
        } else {
          log.push(`renew ${caller.token}`);
          const fromRedis = await scripts.renew(caller.keys.lock, caller.token, LEASE);
          const fromMemory = await memory.renew(caller.keys.lock, caller.token, LEASE);
          log.push(`  redis ${JSON.stringify(fromRedis)} memory ${JSON.stringify(fromMemory)}`);
          expect(fromMemory, 'renew answers alike').toEqual(fromRedis);
        }
      }
      // Grants a release made reach waiters by message; the holders tell who got one.
      const now = await holders();
      for (const caller of callers) {
        if (caller.state === 'waiting' && now.redis[caller.token] !== undefined) Object.assign(caller, { state: 'holding', granted: true });
      }
      log.push(`  holders ${JSON.stringify(now)}`);
      expect(Object.entries(now.memory).sort(), 'the same holders').toEqual(Object.entries(now.redis).sort());
      const used = Object.values(now.redis).reduce((sum, permits) => sum + permits, 0);
      if (now.limit !== undefined) expect(used, 'permits held within the limit').toBeLessThanOrEqual(now.limit);
    }
  }
});
