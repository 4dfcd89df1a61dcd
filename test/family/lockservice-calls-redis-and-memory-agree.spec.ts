import { describe, expect, it } from 'vitest';
import type { LockService } from '../../lib/index.js';
import { useBothStores } from '../support/both-stores.js';
import { useRedis } from '../support/redis.js';
import { firstFailingSeed, random } from './differential.js';

/**
 * Added by review (twenty-ninth session), with no defect found: LockService calls that never wait (tryAcquire of every kind, release, extend, inspect,
 * isLocked) in one random sequence, on Redis and on the in-memory store: every answer alike.
 * 50 seeds in CI (a call is a round trip); `SEEDS=300` for more (300 passed when it was added).
 */
const STEPS = 40;
interface Held { lock: any; kind: string }

function describeError(error: unknown, prefix: string): string {
  const e = error as Error;
  return `${e.constructor.name}: ${e.message.split(prefix).join('<K>').replace(/within \d+ ms/, 'within N ms').replace(/\(\d+ ms after the call\)/, '(N ms after the call)')}`;
}

describe('LockService on Redis and in memory', () => {
  useRedis();
  const [redisBackend, memoryBackend] = useBothStores();
  let run = 0;

  it('answers alike, step after step', async () => {
    const redisApps = [await redisBackend!.open({ ttl: 600_000 }), await redisBackend!.open({ ttl: 600_000 })];
    const memoryApps = [await memoryBackend!.open({ ttl: 600_000 }), await memoryBackend!.open({ ttl: 600_000 })];
    expect(await firstFailingSeed((seed, log) => sequence(seed, log, redisApps.map((a) => a.locks), memoryApps.map((a) => a.locks)), 50)).toEqual([]);
  }, 300_000);

  async function sequence(seed: number, log: string[], redisAll: LockService[], memoryAll: LockService[]): Promise<void> {
    const rand = random(seed);
    const pick = <T>(items: T[]): T => items[Math.floor(rand() * items.length)]!;
    const prefix = `ld${process.pid}-${++run}-`;
    const keys = ['a', 'b', 'c'].map((k) => prefix + k);
    const held: [Held, Held][] = [];
    const firstToken = [new Map<string, number>(), new Map<string, number>()];
    const norm = (which: number, key: string, token: number | undefined) => {
      if (token === undefined) return undefined;
      const m = firstToken[which]!;
      if (!m.has(key)) m.set(key, token);
      return token - m.get(key)!;
    };
    const both = async <T>(what: string, call: (locks: LockService, which: number) => Promise<T>, show: (value: T, which: number) => unknown) => {
      const outcomes: unknown[] = [];
      const values: (T | undefined)[] = [];
      for (const [which, locks] of [redis, memory].entries()) {
        try {
          const value = await call(locks, which);
          values.push(value);
          outcomes.push(show(value, which));
        } catch (error) {
          values.push(undefined);
          outcomes.push(describeError(error, prefix));
        }
      }
      log.push(`${what}: redis ${JSON.stringify(outcomes[0])} memory ${JSON.stringify(outcomes[1])}`);
      expect(outcomes[1], what).toEqual(outcomes[0]);
      return values;
    };
    let redis = redisAll[0]!;
    let memory = memoryAll[0]!;
    for (let step = 0; step < STEPS; step++) {
      const app = rand() < 0.5 ? 0 : 1;
      redis = redisAll[app]!;
      memory = memoryAll[app]!;
      log.push(`app ${app}`);
      const roll = rand();
      const key = pick(keys);
      if (roll < 0.45) {
        const kindRoll = rand();
        let options: object = {};
        let target: string | string[] = key;
        let kind = 'mutex';
        if (kindRoll < 0.25) { options = { mode: 'read' }; kind = 'read'; }
        else if (kindRoll < 0.55) { options = { limit: pick([2, 3]), permits: pick([1, 2]) }; kind = `sem ${JSON.stringify(options)}`; }
        else if (kindRoll < 0.7) { target = [key, pick(keys)]; kind = 'multi'; }
        const wait = rand() < 0.3;
        const [r, m] = await both(`${wait ? 'acquire 30ms' : 'tryAcquire'} ${JSON.stringify(target)} ${kind}`, (locks) => (wait ? locks.acquire(target as string, { ...options, waitTimeout: 30 } as never) : locks.tryAcquire(target as string, options as never)), (lock) => (lock === null ? null : 'held'));
        if (r && m) held.push([{ lock: r, kind }, { lock: m, kind }]);
        else if (r || m) return;
      } else if (roll < 0.65 && held.length > 0) {
        const index = Math.floor(rand() * held.length);
        const [pair] = held.splice(index, 1);
        await both(`release ${pair![0].kind}`, (_, which) => pair![which]!.lock.release(), () => 'released');
      } else if (roll < 0.72 && held.length > 0) {
        const pair = pick(held);
        await both(`extend ${pair[0].kind}`, (_, which) => pair[which]!.lock.extend(pick([1000, 900_000])), (v) => (v === undefined ? 'ok' : typeof v));
      } else if (roll < 0.9) {
        await both(`inspect ${key}`, (locks) => locks.inspect(key), (v, which) => ({
          ...v,
          key: v.key.split(prefix).join('<K>'),
          ttlMs: v.ttlMs === undefined ? undefined : 'set',
          fencingToken: norm(which, key, v.fencingToken),
          holder: v.holder === undefined ? undefined : 'someone',
          semaphore: v.semaphore === undefined ? undefined : { ...v.semaphore, holders: [...v.semaphore.holders].sort((x, y) => x.fencingToken - y.fencingToken).map((h) => ({ ...h, ttlMs: 'set', holder: h.holder === undefined ? undefined : 'someone', fencingToken: norm(which, key, h.fencingToken) })) },
        }));
      } else {
        await both(`isLocked ${key}`, (locks) => locks.isLocked(key), (v) => v);
      }
    }
    for (const [r, m] of held) {
      await r.lock.release().catch(() => undefined);
      await m.lock.release().catch(() => undefined);
    }
  }
});
