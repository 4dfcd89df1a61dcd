/**
 * Defect: when `onLeadershipAcquired` throws, the instance steps down and releases the lease,
 * but the term's `lock.signal` never aborts: work the leader tied to the signal goes on after
 * another instance has become the leader.
 *
 * Promise: docs/jobs-and-leaders.md ("Am I the leader?"): `leaderLock(key)` is "the current
 * term's lock (its `signal` aborts when the term ends ...)"; LeadershipService.leaderLock TSDoc:
 * "its `signal` aborts when the term ends". `@LeaderElection` TSDoc: the hooks' lock "has the
 * lease's `signal`", and the documented pattern ties the leader's work to it
 * (`lock.signal.addEventListener('abort', () => this.socket?.close())`). A term ends when
 * "onLeadershipAcquired threw (the instance steps down and tries again later)". At shutdown the
 * library aborts the signal before onLeadershipLost (the changelog-style note in
 * docs/jobs-and-leaders.md calls "onLeadershipLost at shutdown saw a signal that was not
 * aborted" a bug that was fixed).
 *
 * What happens: `LeaderElectionRunner.stepDown` (lib/scheduling/leader-election.runner.ts:157-163)
 * calls `onLeadershipLost` and then `lock.release()`; a successful release does not abort a
 * HeldLock's signal (lib/core/engine/held-lock.ts:338-346, `releasedInRedis` sets state
 * 'released' without touching the controller). So the stepped-down term's signal stays
 * un-aborted for ever: `onLeadershipLost` sees it live, anything listening to it keeps running,
 * and meanwhile another instance takes the lease and leads: two leaders act at once.
 */
import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { LeaderElection, LeadershipService, RedisLockModule, type Lock, type OnLeadershipAcquired, type OnLeadershipLost } from '../../lib/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

describe('a leader whose onLeadershipAcquired throws', () => {
  const redis = useRedis();

  it('aborts the stepped-down term\'s signal before another instance can lead', async () => {
    const terms: Lock[] = [];
    const abortedInLost: boolean[] = [];
    let failFirst = true;
    // The terms (by fencing token) whose feed runs.
    const feeds = new Set<number>();

    @Injectable()
    // A long ttl: the instance that stepped down retries only 20 s later, after the test.
    @LeaderElection('throwing-leader', { ttl: '60s' })
    class FeedLeader implements OnLeadershipAcquired, OnLeadershipLost {
      onLeadershipAcquired(lock: Lock): void {
        terms.push(lock);
        // The documented pattern: the leader's work stops when the term's signal aborts.
        feeds.add(lock.fencingToken);
        lock.signal.addEventListener('abort', () => feeds.delete(lock.fencingToken), { once: true });
        if (failFirst) {
          failFirst = false;
          throw new Error('could not load the feed configuration');
        }
      }
      onLeadershipLost(lock: Lock): void {
        abortedInLost.push(lock.signal.aborted);
      }
    }

    const startApp = async () => {
      @Module({ imports: [RedisLockModule.forRoot({ redis: redisUrl(), ttl: 1_000 })], providers: [FeedLeader] })
      class AppModule {}
      const logs = new CapturedLogs();
      const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).setLogger(logs).compile();
      await moduleRef.init();
      closers.push(() => moduleRef.close());
      return { moduleRef, logs };
    };

    const a = await startApp();
    // A led, its hook threw, it stepped down: onLeadershipLost ran and the lease was given back.
    await expect.poll(() => abortedInLost.length).toBe(1);
    await expect.poll(() => redis.exists('lock:{throwing-leader}')).toBe(0);
    expect(a.logs.has('error', 'onLeadershipAcquired of FeedLeader threw')).toBe(true);
    expect(a.moduleRef.get(LeadershipService).isLeader('throwing-leader')).toBe(false);

    // Another instance now leads.
    const b = await startApp();
    await expect.poll(() => b.moduleRef.get(LeadershipService).isLeader('throwing-leader')).toBe(true);
    expect(terms).toHaveLength(2);
    expect(terms[1]!.fencingToken).toBeGreaterThan(terms[0]!.fencingToken);

    // Only B's feed may run: A's term is over. Today both run (A's signal never aborted).
    expect([...feeds]).toEqual([terms[1]!.fencingToken]);
    expect(terms[0]!.signal.aborted).toBe(true);
    // And A's onLeadershipLost saw the term over, as it does at shutdown.
    expect(abortedInLost).toEqual([true]);
  });
});
