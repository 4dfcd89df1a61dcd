import { Injectable } from '@nestjs/common';
import { describe, expect, it } from 'vitest';
import { LeaderElection, LeadershipService, LockLostError, LockService, type Lock, type OnLeadershipAcquired, type OnLeadershipLost } from '../../lib/index.js';
import { useRedis } from '../support/redis.js';
import { startJobApp } from '../jobs/support.js';

// 78fa5c1 arms the deadline sweeper's timer outside any call chain, because "made there, it
// would carry that call's chain (its locks) into every later sweep, and a loss told from a sweep
// would hand that chain to the code it wakes". The watchdog (RenewalScheduler.add) has the same
// flaw and was left alone: one RxJS interval per renewInterval, created in the async context of
// whichever acquisition first used that interval. A refused renewal (the commonest loss: the key
// was taken or deleted) is told from that interval's tick, so every lock of that interval has its
// loss told -- its signal's listeners, a leader's lost()/onLeadershipLost -- inside the call chain
// of an unrelated call, here one whose own lock was lost: LockService.current() names that lock,
// and taking its key throws that lock's LockLostError.
const tick = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('a loss told from a watchdog tick', () => {
  const redis = useRedis();

  it("runs the code it wakes outside any call chain (not the chain of the call that first armed that interval's watchdog)", async () => {
    const app = await startJobApp([]);
    const locks = app.get(LockService);
    let release!: () => void;
    const jobDone = new Promise<void>((resolve) => (release = resolve));
    let victimArmed!: () => void;
    const armed = new Promise<void>((resolve) => (victimArmed = resolve));
    let inner: Lock | undefined;
    // A long job under 'job'; the first lock of a 6 s ttl (2 s watchdog interval) is taken inside it.
    const job = locks.using('job', async (jobLock: Lock) => {
      inner = (await locks.acquire('helper', { ttl: '6s' })) as Lock;
      victimArmed();
      // The job's own lease is lost while it still runs (it has not returned yet).
      await redis.del('lock:{job}');
      while (!jobLock.signal.aborted) await tick(50);
      await jobDone;
    }).catch(() => undefined);
    await armed;

    // Unrelated code, outside any chain, holds another lock of that ttl and listens for its loss.
    const victim = (await locks.acquire('victim', { ttl: '6s' })) as Lock;
    expect(locks.current()).toBeUndefined();
    let currentAtLoss: string | undefined = 'not told';
    let retakeError: unknown;
    victim.signal.addEventListener('abort', () => {
      currentAtLoss = locks.current()?.key;
      // The listener takes its key back (or any other key the job used).
      locks.tryAcquire('job').then((lock) => lock?.release(), (error: unknown) => (retakeError = error));
    });
    await redis.del('lock:{victim}');
    await expect.poll(() => victim.signal.aborted, { timeout: 10_000 }).toBe(true);
    expect((victim.signal.reason as LockLostError).reason).toBe('refused');
    await tick(200);
    release();
    await job;
    await inner?.release().catch(() => undefined);
    // Fails: currentAtLoss is 'job', and tryAcquire('job') threw the job's LockLostError.
    expect({ currentAtLoss, retakeError: retakeError === undefined ? undefined : String(retakeError) }).toEqual({ currentAtLoss: undefined, retakeError: undefined });
  }, 60_000);

  it("runs a leader's onLeadershipLost outside any call chain", async () => {
    const seen: { current?: string; retake?: string }[] = [];
    let locks!: LockService;
    @Injectable()
    @LeaderElection('elected-foreign-chain', { ttl: '6s' })
    class Leader implements OnLeadershipAcquired, OnLeadershipLost {
      onLeadershipAcquired(): void {}
      async onLeadershipLost(): Promise<void> {
        const current = locks.current()?.key;
        // Its clean-up takes a lock of its own.
        let retake: string | undefined;
        try {
          await (await locks.tryAcquire('job'))?.release();
        } catch (error) {
          retake = (error as Error).constructor.name;
        }
        seen.push({ ...(current === undefined ? {} : { current }), ...(retake === undefined ? {} : { retake }) });
      }
    }
    // Another instance leads first, so that this one's first term comes after the job below.
    const other = await startJobApp([]);
    const otherTerm = (await other.get(LockService).acquire('elected-foreign-chain', { ttl: '6s' })) as Lock;
    const app = await startJobApp([Leader]);
    locks = app.get(LockService);
    const leadership = app.get(LeadershipService);
    let release!: () => void;
    const jobDone = new Promise<void>((resolve) => (release = resolve));
    let lostJob!: () => void;
    const jobLost = new Promise<void>((resolve) => (lostJob = resolve));
    const job = locks.using('job', async (jobLock: Lock) => {
      await locks.acquire('helper', { ttl: '6s' }); // the first lock of the 2 s watchdog interval
      await redis.del('lock:{job}');
      while (!jobLock.signal.aborted) await tick(50);
      lostJob();
      await jobDone;
    }).catch(() => undefined);
    await jobLost;
    await otherTerm.release();
    await expect.poll(() => leadership.isLeader('elected-foreign-chain'), { timeout: 15_000 }).toBe(true);
    await redis.del('lock:{elected-foreign-chain}');
    await expect.poll(() => seen.length, { timeout: 15_000 }).toBe(1);
    release();
    await job;
    // Fails: [{ current: 'job', retake: 'LockLostError' }] -- the hook ran in the job's chain.
    expect(seen).toEqual([{}]);
  }, 60_000);
});
