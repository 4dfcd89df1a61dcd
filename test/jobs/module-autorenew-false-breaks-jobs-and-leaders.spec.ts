/**
 * Defect: the module option `autoRenew: false` silently turns off the renewal of job run locks,
 * `@OnOneInstance()` leases and leaderships: a run longer than its ttl overlaps with another
 * instance's, and the leader loses its leadership every ttl.
 *
 * Promise: docs/jobs-and-leaders.md: `@WithoutOverlapping()` "a call runs under the run lock ...,
 * held and renewed for the whole run"; `@OnOneInstance()` "takes the lease `<key>:owner` and keeps
 * it, renewed between calls, as long as it is up"; `@LeaderElection` "the leader's watchdog renews
 * it". The job/election decorators have no `autoRenew` option of their own (only `key`/`ttl`).
 * docs/configuration.md documents `autoRenew` as the default of lock calls ("can be overridden
 * per call").
 *
 * What happens: the orchestrator and the election runner take their locks with
 * `tryAcquire(key, { ttl?, name, label })` (`lockOptions`, lib/scheduling/job-lock.orchestrator.ts:313-316, used at :205 and :354;
 * lib/scheduling/leader-election.runner.ts:101-105), so they inherit the module's
 * `autoRenew`. With `autoRenew: false` the run lock expires mid-run (another instance then runs the
 * same job at the same time), the owner lease expires between calls, and the leadership is lost
 * after each ttl (onLeadershipLost, then a new term at the next try).
 *
 * Deterministic on the in-memory store with a manual clock (the product the docs say keeps the
 * Redis protocol), and shown on real Redis for the overlap.
 */
import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { LeaderElection, LockService, RedisLockModule, WithoutOverlapping, type Lock, type LockEvent } from '../../lib/index.js';
import { InMemoryLocks, RedisLockTestingModule } from '../../lib/testing/index.js';
import { CapturedLogs, sleep } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

@Injectable()
class Reconcile {
  runs = 0;
  private releases: (() => void)[] = [];
  @WithoutOverlapping({ ttl: '3s' })
  async run(): Promise<void> {
    this.runs++;
    await new Promise<void>((resolve) => this.releases.push(resolve));
  }
  finish(): void {
    for (const release of this.releases.splice(0)) release();
  }
}

describe('module option autoRenew: false', () => {
  it('(manual clock) a leader keeps its leadership past its ttl', async () => {
    const store = new InMemoryLocks({ clock: 'manual' });
    const hooks: string[] = [];
    @Injectable()
    @LeaderElection('feed', { ttl: '3s' })
    class Feed {
      onLeadershipAcquired(lock: Lock): void {
        hooks.push(`acquired ${lock.fencingToken}`);
      }
      onLeadershipLost(lock: Lock): void {
        hooks.push(`lost ${lock.fencingToken}`);
      }
    }
    @Module({ imports: [RedisLockTestingModule.forRoot({ locks: store, autoRenew: false })], providers: [Feed] })
    class AppModule {}
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).setLogger(new CapturedLogs()).compile();
    await moduleRef.init();
    closers.push(() => moduleRef.close());
    await store.manualClock.advance(0);
    expect(hooks).toEqual([expect.stringMatching(/^acquired \d+$/)]);
    const [acquired] = hooks;
    // Three ttls, nobody else around: the watchdog renews the leadership.
    await store.manualClock.advance('9s');
    // Today: ['acquired T', 'lost T', 'acquired T+1', 'lost T+1', 'acquired T+2', ...]
    expect(hooks).toEqual([acquired]);
  });

  it('(manual clock) a run longer than its ttl keeps its run lock: no second run beside it', async () => {
    const store = new InMemoryLocks({ clock: 'manual' });
    const start = async () => {
      @Module({ imports: [RedisLockTestingModule.forRoot({ locks: store, autoRenew: false })], providers: [Reconcile] })
      class AppModule {}
      const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).setLogger(new CapturedLogs()).compile();
      await moduleRef.init();
      closers.push(() => moduleRef.close());
      return moduleRef;
    };
    const a = await start();
    const b = await start();
    const lost: LockEvent[] = [];
    a.get(LockService).events$.subscribe((event) => event.type === 'lost' && lost.push(event));
    const running = a.get(Reconcile).run();
    await store.manualClock.advance(0);
    expect(a.get(Reconcile).runs).toBe(1);
    // The run goes on past its 3 s ttl.
    await store.manualClock.advance('4s');
    expect(lost).toEqual([]);
    // The other instance's tick must be skipped (held-elsewhere). Today it runs: two runs at once.
    expect(await Promise.race([b.get(Reconcile).run().then(() => 'finished'), store.manualClock.advance(0).then(() => 'running')])).toBe('finished');
    expect(b.get(Reconcile).runs).toBe(0);
    b.get(Reconcile).finish();
    a.get(Reconcile).finish();
    await running;
  });

  describe('on Redis', () => {
    useRedis();

    it('a run longer than its ttl keeps its run lock: no second run beside it', async () => {
      @Injectable()
      class ShortJob {
        runs = 0;
        private releases: (() => void)[] = [];
        @WithoutOverlapping({ ttl: 600 })
        async run(): Promise<void> {
          this.runs++;
          await new Promise<void>((resolve) => this.releases.push(resolve));
        }
        finish(): void {
          for (const release of this.releases.splice(0)) release();
        }
      }
      const start = async () => {
        @Module({ imports: [RedisLockModule.forRoot({ redis: redisUrl(), autoRenew: false })], providers: [ShortJob] })
        class AppModule {}
        const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).setLogger(new CapturedLogs()).compile();
        await moduleRef.init();
        closers.push(() => moduleRef.close());
        return moduleRef;
      };
      const a = await start();
      const b = await start();
      const running = a.get(ShortJob).run();
      await expect.poll(() => a.get(ShortJob).runs).toBe(1);
      // Let two and a half ttls pass while the run goes on (a renewed lock outlives this by far).
      await sleep(1_500);
      // B's call must be skipped while A's run holds the lock. Today B runs it too.
      let settled = false;
      const second = b.get(ShortJob).run().finally(() => (settled = true));
      // Either B's call ends (skipped), or B's run starts.
      await expect.poll(() => settled || b.get(ShortJob).runs === 1).toBe(true);
      expect({ a: a.get(ShortJob).runs, b: b.get(ShortJob).runs }).toEqual({ a: 1, b: 0 });
      a.get(ShortJob).finish();
      b.get(ShortJob).finish();
      await Promise.all([running, second]);
    });
  });
});
