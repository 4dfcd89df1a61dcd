import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { LeaderElection, LeadershipService, LockService, RedisLockModule, type Lock, type OnLeadershipAcquired } from '../../lib/index.js';
import { InMemoryLocks, RedisLockTestingModule } from '../../lib/testing/index.js';
import { LOCK_RUNNER } from '../../lib/redis-lock.constants.js';
import type { LockManager } from '../../lib/core/engine/lock-manager.js';
import { lockRedisKeys } from '../../lib/core/keys/lock-key.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

// Found by review: under a module `fenceRetention`, only a new token restarted a fencing
// counter's expiry; renewals did not. A lock held longer than the retention (a leader's term, an
// @OnOneInstance owner lease: held as long as the instance is up) outlived its counter, and the
// next holder's token started again at 1, below the one the paused ex-holder wrote with:
// docs/jobs-and-leaders.md says the token "grows with every term" and "a paused ex-leader's token
// is lower". A lock held a third of the retention now pushes its counter's expiry on at its
// renewals (a script of its own: the renewals' scripts are left as they are).

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

async function testingApp(locks: InMemoryLocks, providers: (new (...args: never[]) => unknown)[] = []) {
  const moduleRef = await Test.createTestingModule({ imports: [RedisLockTestingModule.forRoot({ locks, fenceRetention: '60s', ttl: '10s' })], providers })
    .setLogger(new CapturedLogs())
    .compile();
  await moduleRef.init();
  closers.push(() => moduleRef.close());
  return moduleRef;
}

/** Moves the manual clock on by `ms`, a second at a time (the watchdog renews every ttl / 3). */
async function hold(locks: InMemoryLocks, ms: number): Promise<void> {
  for (let spent = 0; spent < ms; spent += 1_000) await locks.manualClock.advance(1_000);
}

describe('a lock held longer than the module fenceRetention (testing store, manual clock)', () => {
  it('keeps its fencing counter: the next holder gets a higher token', async () => {
    const locks = new InMemoryLocks({ clock: 'manual' });
    const service = (await testingApp(locks)).get(LockService);
    const first = await service.acquire('long');
    await hold(locks, 130_000);
    expect(first.held).toBe(true);
    await first.release();
    const next = await service.acquire('long');
    expect(next.fencingToken).toBe(first.fencingToken + 1);
    await next.release();
  });

  it("gives a leader's next term a token above the long term before it", async () => {
    const locks = new InMemoryLocks({ clock: 'manual' });
    const terms: number[] = [];
    @Injectable()
    @LeaderElection('long-term')
    class Leader implements OnLeadershipAcquired {
      onLeadershipAcquired(lock: Lock): void {
        terms.push(lock.fencingToken);
      }
    }
    const app = await testingApp(locks, [Leader]);
    for (let i = 0; i < 20 && terms.length === 0; i++) await locks.manualClock.advance(0);
    await hold(locks, 130_000);
    expect(terms).toHaveLength(1);
    await app.get(LeadershipService).leaderLock('long-term')!.release();
    await hold(locks, 10_000);
    expect(terms).toEqual([terms[0], terms[0]! + 1]);
  });
});

describe('the Redis store pushing a fencing counter on', () => {
  const redis = useRedis();

  it('restarts the counter\'s expiry at the retention, and leaves a counter without one alone', async () => {
    const moduleRef = await Test.createTestingModule({ imports: [RedisLockModule.forRoot({ redis: redisUrl(), fenceRetention: '60s' })] })
      .setLogger(new CapturedLogs())
      .compile();
    await moduleRef.init();
    closers.push(() => moduleRef.close());
    const manager = moduleRef.get(LockService)[LOCK_RUNNER] as LockManager;
    const lock = await moduleRef.get(LockService).acquire('pushed');
    const fence = lockRedisKeys('lock:', 'pushed').fence;
    await redis.pexpire(fence, 5_000); // as if the token had been handed out 55 s ago
    await manager.store.keepFence!(fence);
    expect(await redis.pttl(fence)).toBeGreaterThan(50_000);
    await redis.persist(fence);
    await manager.store.keepFence!(fence);
    expect(await redis.pttl(fence)).toBe(-1);
    await lock.release();
  });
});
