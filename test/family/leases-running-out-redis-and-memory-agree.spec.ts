import { Test } from '@nestjs/testing';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { LockService, type LockInspection } from '../../lib/index.js';
import { InMemoryLocks, RedisLockTestingModule } from '../../lib/testing/index.js';
import { CapturedLogs, createLockApp, type LockApp } from '../support/lock-app.js';
import { useRedis } from '../support/redis.js';

/**
 * Added by review (session 43), with no defect of the in-memory store found: LockService calls of
 * two callers (mutexes, semaphores of limit 1 to 3 asked for 1 to 4 permits, multi-key locks;
 * tryAcquire, acquire with a short wait, a caller waiting while a holder releases or its lease
 * runs out, release, extend to a shorter, a longer and a refused ttl, leases running out) in
 * random sequences made by fast-check, on Redis and on the in-memory store: every answer alike
 * (locks and their tokens' order, busy answers, errors' classes and messages, inspect()). The
 * other differential specs keep leases long; here a lease runs out: it is extended to 150 ms,
 * the memory store's manual clock is moved past it, and on Redis the step waits until Redis no
 * longer shows it (by inspect: a mechanism, no time bound). fast-check shrinks a failing
 * sequence and prints it with its seed and path: `SEED=<seed> FC_PATH=<path> NO_SHRINK=1`
 * replays it; keep what it finds as a spec of its own. 60 runs from a fixed seed in CI, so that a
 * run is the same sequences every time (exploring is the explorers' job); `SEED=<n> RUNS=400` for
 * others (1,100 passed when it was added).
 *
 * Read locks joined the kinds later (review, session 48, no defect found): readers alone and in
 * multi-key locks, against writers, lapsing (a reader's lapse is seen on Redis by its own key
 * going), handed over to a contending writer or reader. The fixed seed's 60 runs and 200 runs
 * of each of seeds 11 to 13 passed; so did 60 to 250 runs of seeds 1 to 8 in a draft without
 * semaphores (one of them failed once on a loaded machine and passed on its retry, not seen again).
 */
const FIXED_SEED = 20_261_207;
const LONG = 60_000;
const SHORT = 150;
const WAIT = 30;
/** How long a contending caller waits: long enough for a handoff on a loaded machine. */
const CONTEND_WAIT = 2_000;
const RUNS = Number(process.env.RUNS ?? 60);

type Kind = { type: 'mutex' } | { type: 'read' } | { type: 'sem'; limit: number; permits: number } | { type: 'multi'; other: number; read?: true };
type Step =
  | { op: 'try' | 'wait'; caller: number; key: number; kind: Kind }
  | { op: 'release' | 'lapse'; pick: number }
  | { op: 'extend'; pick: number; ttl: number }
  | { op: 'contend'; caller: number; key: number; kind: Kind; end: 'release' | 'lapse'; pick: number }
  | { op: 'inspect' | 'isLocked'; key: number };

const kindArb: fc.Arbitrary<Kind> = fc.oneof(
  fc.constant<Kind>({ type: 'mutex' }),
  fc.constant<Kind>({ type: 'read' }),
  fc.integer({ min: 1, max: 3 }).chain((limit) => fc.integer({ min: 1, max: limit + 1 }).map((permits): Kind => ({ type: 'sem', limit, permits }))),
  fc.integer({ min: 0, max: 2 }).map((other): Kind => ({ type: 'multi', other })),
  fc.integer({ min: 0, max: 2 }).map((other): Kind => ({ type: 'multi', other, read: true })),
);
const isRead = (kind: Kind): boolean => kind.type === 'read' || (kind.type === 'multi' && kind.read === true);
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ op: fc.constantFrom<'try' | 'wait'>('try', 'wait'), caller: fc.integer({ min: 0, max: 1 }), key: fc.integer({ min: 0, max: 2 }), kind: kindArb }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constantFrom<'release' | 'lapse'>('release', 'lapse'), pick: fc.nat(9) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant<'extend'>('extend'), pick: fc.nat(9), ttl: fc.constantFrom(LONG / 2, LONG * 2, 0) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant<'contend'>('contend'), caller: fc.integer({ min: 0, max: 1 }), key: fc.integer({ min: 0, max: 2 }), kind: kindArb, end: fc.constantFrom<'release' | 'lapse'>('release', 'lapse'), pick: fc.nat(9) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constantFrom<'inspect' | 'isLocked'>('inspect', 'isLocked'), key: fc.integer({ min: 0, max: 2 }) }) },
);

describe('LockService on Redis and in memory, leases running out', () => {
  const redis = useRedis();
  const memory = new InMemoryLocks({ clock: 'manual' });
  const apps: LockApp[] = [];
  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
    memory.clear();
  });
  let run = 0;

  const openMemory = async (): Promise<LockApp> => {
    const logs = new CapturedLogs();
    const moduleRef = await Test.createTestingModule({ imports: [RedisLockTestingModule.forRoot({ locks: memory, ttl: LONG, autoRenew: false })] })
      .setLogger(logs)
      .compile();
    await moduleRef.init();
    return { locks: moduleRef.get(LockService), logs, close: () => moduleRef.close() };
  };

  it('answers alike, step after step', async () => {
    for (let i = 0; i < 2; i++) apps.push(await createLockApp({ ttl: LONG, autoRenew: false }));
    for (let i = 0; i < 2; i++) apps.push(await openMemory());
    const redisLocks = [apps[0]!.locks, apps[1]!.locks];
    const memoryLocks = [apps[2]!.locks, apps[3]!.locks];
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 1, maxLength: 25 }), (steps) => sequence(steps, redisLocks, memoryLocks)),
      { numRuns: RUNS, endOnFailure: process.env.NO_SHRINK === '1', seed: Number(process.env.SEED ?? FIXED_SEED), ...(process.env.FC_PATH ? { path: process.env.FC_PATH } : {}) },
    );
  }, 120_000);

  async function sequence(steps: Step[], redisLocks: LockService[], memoryLocks: LockService[]): Promise<void> {
    const prefix = `lapse${process.pid}-${++run}-`;
    const keys = ['a', 'b', 'c'].map((k) => prefix + k);
    const log: string[] = [];
    const held: { kind: Kind; keys: string[]; locks: [any, any] }[] = [];
    // Tokens compared by their order among the key's tokens seen so far: a token's number is not
    // promised (Redis once answered a handed-over waiter two above the token before it), its order is.
    const seenTokens = [new Map<string, number[]>(), new Map<string, number[]>()];
    const norm = (which: number, key: string, token: number | undefined) => {
      if (token === undefined) return undefined;
      const seen = seenTokens[which]!.get(key) ?? [];
      if (!seen.includes(token)) seen.push(token);
      seen.sort((x, y) => x - y);
      seenTokens[which]!.set(key, seen);
      return seen.indexOf(token);
    };
    const showError = (error: unknown) => {
      const e = error as Error;
      return `${e.constructor.name}: ${e.message.split(prefix).join('<K>').replace(/\d+ ms/g, 'N ms').replace(/fencing token \d+/g, 'fencing token N')}`;
    };
    const both = async <T>(what: string, call: (which: number) => Promise<T>, show: (value: T, which: number) => unknown) => {
      const outcomes: unknown[] = [];
      const values: (T | undefined)[] = [];
      for (const which of [0, 1]) {
        try {
          const value = await call(which);
          values.push(value);
          outcomes.push(show(value, which));
        } catch (error) {
          values.push(undefined);
          outcomes.push(showError(error));
        }
      }
      log.push(`${what}: ${JSON.stringify(outcomes[0])}${JSON.stringify(outcomes[1]) === JSON.stringify(outcomes[0]) ? '' : ` memory ${JSON.stringify(outcomes[1])}`}`);
      expect(outcomes[1], `${what}: memory against redis\n${log.join('\n')}`).toEqual(outcomes[0]);
      return values;
    };
    const showLock = (lock: any, which: number) => {
      if (lock === null) return null;
      if (lock.fencingTokens) return Object.fromEntries(Object.entries(lock.fencingTokens as Record<string, number>).map(([k, t]) => [k.split(prefix).join('<K>'), norm(which, k, t)]));
      return norm(which, lock.key, lock.fencingToken);
    };
    const showInspection = (v: LockInspection, which: number) => ({
      ...v,
      key: v.key.split(prefix).join('<K>'),
      ttlMs: v.ttlMs === undefined ? undefined : 'set',
      fencingToken: norm(which, v.key, v.fencingToken),
      holder: v.holder === undefined ? undefined : 'someone',
      semaphore: v.semaphore === undefined ? undefined : { ...v.semaphore, holders: [...v.semaphore.holders].sort((x, y) => x.fencingToken - y.fencingToken).map((h) => ({ ...h, ttlMs: 'set', holder: h.holder === undefined ? undefined : 'someone', fencingToken: norm(which, v.key, h.fencingToken) })) },
    });
    // The key's fencingToken is its counter, shared with its same-named semaphore and kept after
    // a lease ends: a semaphore's lease shows among its holders, a mutex's as the key held at its
    // token, a reader's as its own key (the lapsing one alone has a lease this short).
    const shows = async (key: string, kind: Kind, token: number): Promise<boolean> => {
      if (isRead(kind)) {
        for (const name of await redis.keys(`lock:{${key}}:reader:*`)) {
          const left = await redis.pttl(name);
          if (left >= 0 && left < LONG / 4) return true;
        }
        return false;
      }
      const v = await redisLocks[0]!.inspect(key);
      return kind.type === 'sem' ? (v.semaphore?.holders ?? []).some((h) => h.fencingToken === token) : v.held && v.fencingToken === token;
    };

    const targetOf = (step: { key: number; kind: Kind }) => {
      const key = keys[step.key]!;
      const target = step.kind.type === 'multi' ? [key, keys[step.kind.other]!] : key;
      const options = step.kind.type === 'sem' ? { limit: step.kind.limit, permits: step.kind.permits } : isRead(step.kind) ? { mode: 'read' } : {};
      return { target, options };
    };
    const lapse = async (pair: (typeof held)[number]) => {
      const [extended] = await both(`extend ${JSON.stringify(pair.kind)} to ${SHORT} to let it lapse`, (which) => pair.locks[which].extend(SHORT).then(() => true), () => 'extended');
      if (!extended) return;
      await memory.manualClock!.advance(SHORT + 1);
      const redisLock = pair.locks[0];
      const tokens: Record<string, number> = redisLock.fencingTokens ?? { [redisLock.key]: redisLock.fencingToken };
      await expect
        .poll(async () => {
          for (const [k, t] of Object.entries(tokens)) if (await shows(k, pair.kind, t)) return 'still shown';
          return redisLock.signal.aborted ? 'lapsed' : 'not aborted';
        }, { timeout: 5_000, interval: 20, message: log.join('\n') })
        .toBe('lapsed');
      log.push(`lapsed ${JSON.stringify(tokens)}`);
      expect(pair.locks[1].signal.aborted, 'the memory lock lapsed too').toBe(true);
    };
    /** A caller waits while a held lock is released or runs out: both stores hand it over, or not, alike. */
    const contend = async (step: Extract<Step, { op: 'contend' }>) => {
      const { target, options } = targetOf(step);
      const what = `contend caller ${step.caller} ${JSON.stringify(target).split(prefix).join('')} ${JSON.stringify(step.kind)} then ${step.end}`;
      const settle = (attempt: Promise<unknown>) => {
        const box: { done?: { lock: unknown } | { error: unknown } } = {};
        const settled = attempt.then(
          (lock) => (box.done = { lock }),
          (error: unknown) => (box.done = { error }),
        );
        return { box, settled };
      };
      const onRedis = settle(redisLocks[step.caller]!.acquire(target as string, { ...options, waitTimeout: CONTEND_WAIT } as never));
      const inMemory = settle(memoryLocks[step.caller]!.acquire(target as string, { ...options, waitTimeout: CONTEND_WAIT } as never));
      await memory.manualClock!.advance(0);
      const targetKeys = typeof target === 'string' ? [target] : target;
      // Redis' waiter must be in its queue (or done) before the holder lets go, as the memory one is.
      await expect
        .poll(async () => {
          if (onRedis.box.done) return true;
          for (const k of targetKeys) {
            const v = await redisLocks[0]!.inspect(k);
            if (v.waiters > 0 || (v.semaphore?.waiters ?? 0) > 0) return true;
          }
          return false;
        }, { timeout: 5_000, interval: 10 })
        .toBe(true);
      if (held.length > 0) {
        const index = step.pick % held.length;
        if (step.end === 'release') {
          const [pair] = held.splice(index, 1);
          await both(`release ${JSON.stringify(pair!.kind)}`, (which) => pair!.locks[which].release(), () => 'released');
        } else {
          await lapse(held[index]!);
        }
      }
      await onRedis.settled;
      await memory.manualClock!.advance(0);
      if (!inMemory.box.done) await memory.manualClock!.advance(CONTEND_WAIT + 1);
      await inMemory.settled;
      const [r, m] = await both(
        what,
        async (which) => {
          const done = (which === 0 ? onRedis : inMemory).box.done!;
          if ('error' in done) throw done.error;
          return done.lock;
        },
        showLock,
      );
      if (r && m) held.push({ kind: step.kind, keys: targetKeys, locks: [r, m] });
      else if (r || m) throw new Error(`${what}: one store handed the lock over, the other not`);
    };

    try {
      for (const step of steps) {
        if (step.op === 'try' || step.op === 'wait') {
          const key = keys[step.key]!;
          const target = step.kind.type === 'multi' ? [key, keys[step.kind.other]!] : key;
          const options = step.kind.type === 'sem' ? { limit: step.kind.limit, permits: step.kind.permits } : isRead(step.kind) ? { mode: 'read' } : {};
          const what = `${step.op} caller ${step.caller} ${JSON.stringify(target).split(prefix).join('')} ${JSON.stringify(step.kind)}`;
          const [r, m] = await both(
            what,
            async (which) => {
              const locks = (which === 0 ? redisLocks : memoryLocks)[step.caller]!;
              if (step.op === 'try') return locks.tryAcquire(target as string, options as never);
              const attempt = locks.acquire(target as string, { ...options, waitTimeout: WAIT } as never);
              // The memory store's wait runs on its manual clock: move it as far as Redis' wait lasts.
              if (which === 1) {
                const settled = attempt.then(
                  (lock) => ({ lock }),
                  (error: unknown) => ({ error }),
                );
                await memory.manualClock!.advance(WAIT + 1);
                const result = await settled;
                if ('error' in result) throw result.error;
                return result.lock;
              }
              return attempt;
            },
            showLock,
          );
          if (r && m) held.push({ kind: step.kind, keys: typeof target === 'string' ? [target] : target, locks: [r, m] });
          else if (r || m) return;
        } else if (step.op === 'release' && held.length > 0) {
          const [pair] = held.splice(step.pick % held.length, 1);
          await both(`release ${JSON.stringify(pair!.kind)}`, (which) => pair!.locks[which].release(), () => 'released');
        } else if (step.op === 'extend' && held.length > 0) {
          const pair = held[step.pick % held.length]!;
          await both(`extend ${JSON.stringify(pair.kind)} to ${step.ttl}`, (which) => pair.locks[which].extend(step.ttl), () => 'extended');
        } else if (step.op === 'lapse' && held.length > 0) {
          await lapse(held[step.pick % held.length]!);
        } else if (step.op === 'contend') {
          await contend(step);
        } else if (step.op === 'inspect') {
          await both(`inspect ${step.key}`, (which) => (which === 0 ? redisLocks : memoryLocks)[0]!.inspect(keys[step.key]!), showInspection);
        } else if (step.op === 'isLocked') {
          await both(`isLocked ${step.key}`, (which) => (which === 0 ? redisLocks : memoryLocks)[0]!.isLocked(keys[step.key]!), (v) => v);
        }
      }
      for (const key of keys) await both(`inspect ${key} at the end`, (which) => (which === 0 ? redisLocks : memoryLocks)[0]!.inspect(key), showInspection);
    } finally {
      for (const pair of held) for (const lock of pair.locks) await lock.release().catch(() => undefined);
    }
  }
});
