import { afterEach, describe, expect, it } from 'vitest';
import { LockService } from '../../lib/index.js';
import { createLockApp, type LockApp } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';
import { ChaosWorker, monotonicMs } from './support/chaos-worker.js';
import { report } from './support/report.js';

describe('chaos: a holder paused longer than its lease', () => {
  useRedis();
  let rival: LockApp | undefined;
  afterEach(() => rival?.close());

  it('is told of the loss as soon as it runs again, and its fencing token is lower', { timeout: 30_000 }, async () => {
    const ttl = 1_000;
    const holder = ChaosWorker.start({ REDIS_URL: redisUrl(), MODE: 'hold', KEY: 'paused', TTL: ttl, RENEW: 300 }, 'hold');
    const { acquired: pausedToken } = await holder.next<{ acquired: number }>('acquired');
    rival = await createLockApp();
    const locks: LockService = rival.locks;

    holder.child.kill('SIGSTOP');
    const stoppedAt = monotonicMs();
    const lock = await locks.acquire('paused', { waitTimeout: 5_000 });
    const takenAfter = monotonicMs() - stoppedAt;
    await new Promise((resolve) => setTimeout(resolve, 2_000 - takenAfter));
    const resumedAt = monotonicMs();
    holder.child.kill('SIGCONT');
    const loss = await holder.next<{ lost: string; at: number; fencingToken: number }>('lost');
    holder.send('release');
    const exit = await holder.exitsOnItsOwn(2_000);
    // The woken holder's release must not have touched the new holder's lock.
    const stillInRedis = await lock.extend().then(() => true, () => false);
    await lock.release();

    report('process-pause', {
      pausedMs: resumedAt - stoppedAt,
      rivalAcquiredAfterMs: takenAfter,
      msFromResumeToAbort: loss.at - resumedAt,
      pausedToken,
      rivalToken: lock.fencingToken,
      exitMs: exit,
    });
    // Told on resume by a due timer: a loss noticed only at release would never come, since the
    // release is asked for after it. The bound only stops a hang; the summary line says how soon.
    expect(loss.lost).toMatch(/expired|refused/);
    expect(loss.at - resumedAt).toBeLessThan(5_000);
    expect(loss.fencingToken).toBe(pausedToken);
    expect(lock.fencingToken).toBeGreaterThan(pausedToken);
    expect(stillInRedis).toBe(true);
  });
});
