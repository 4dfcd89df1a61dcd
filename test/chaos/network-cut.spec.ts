import { afterEach, describe, expect, it } from 'vitest';
import { redisUrl, useRedis } from '../support/redis.js';
import { ChaosWorker, monotonicMs } from './support/chaos-worker.js';
import { report } from './support/report.js';
import { TcpProxy } from './support/tcp-proxy.js';

describe('chaos: network cut between clients and Redis', () => {
  const redis = useRedis();
  let proxy: TcpProxy | undefined;
  afterEach(() => proxy?.close());

  it('tells the holder by its deadline, bounds waits, and recovers when the network heals', { timeout: 60_000 }, async () => {
    proxy = await TcpProxy.start(Number(new URL(redisUrl()).port));
    const url = `${proxy.url}${new URL(redisUrl()).pathname}`;
    const ttl = 1_000;
    const holder = ChaosWorker.start({ REDIS_URL: url, MODE: 'hold', KEY: 'cut', TTL: ttl, RENEW: 300 }, 'hold');
    await holder.next('acquired');
    const boundedWaiter = ChaosWorker.start({ REDIS_URL: url, MODE: 'wait', KEY: 'cut', WAIT: 1_500 }, 'wait-bounded');
    await new Promise((resolve) => setTimeout(resolve, 500));

    const cutAt = monotonicMs();
    proxy.cut();
    const loss = await holder.next<{ lost: string; at: number; deadline: number }>('lost');
    const bounded = await boundedWaiter.next<{ error?: string; message?: string; waited: number }>('waited');
    // A waiter that starts during the cut and may wait long enough gets the lock after the heal.
    const patientWaiter = ChaosWorker.start({ REDIS_URL: url, MODE: 'wait', KEY: 'cut', WAIT: 20_000 }, 'wait-patient');
    await new Promise((resolve) => setTimeout(resolve, 800));
    // Meanwhile Redis itself let the holder's lease run out.
    expect(await redis.exists('lock:{cut}')).toBe(0);
    const healedAt = monotonicMs();
    proxy.heal();
    const patient = await patientWaiter.next<{ acquired?: number; error?: string }>('waited');
    const fresh = ChaosWorker.start({ REDIS_URL: url, MODE: 'wait', KEY: 'cut', WAIT: 5_000 }, 'wait-fresh');
    const after = await fresh.next<{ acquired?: number }>('waited');
    holder.send('release');
    const exits = await Promise.all([holder, boundedWaiter, patientWaiter, fresh].map((worker) => worker.exitsOnItsOwn(2_000)));

    report('network-cut', {
      msFromCutToLoss: loss.at - cutAt,
      msAfterDeadline: loss.at - loss.deadline,
      boundedWaiter: bounded.error ?? 'acquired',
      boundedWaitMs: bounded.waited,
      patientWaiter: patient.error ?? 'acquired after heal',
      msFromHealToAcquire: monotonicMs() - healedAt,
      newLockAfterHeal: after.acquired !== undefined,
      slowestExitMs: Math.max(...exits),
    });
    // Told by the deadline timer, not before the deadline a renewal answered before the cut had
    // set (the worker's estimate of it may lie a few ms after the engine's); how late a loaded
    // machine runs the timer is the summary line's business.
    expect(loss.lost).toBe('expired');
    expect(loss.at).toBeGreaterThan(loss.deadline - 5);
    expect(loss.deadline - cutAt).toBeLessThan(ttl);
    // Bounded by its waitTimeout, not by the heal (which came after it gave up): an attempt
    // nobody answers would otherwise hang it. The bound only stops a hang.
    expect(bounded.error).toBe('LockNotAcquiredError');
    expect(bounded.waited).toBeLessThan(10_000);
    expect(patient.acquired).toBeGreaterThan(loss.at === 0 ? 0 : 1);
    expect(after.acquired).toBeGreaterThan(patient.acquired!);
  });
});
