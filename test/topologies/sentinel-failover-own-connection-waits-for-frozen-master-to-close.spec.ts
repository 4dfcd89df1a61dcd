import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { startSentinelDeployment } from '../../scripts/redis-sentinel.mjs';
import { createLockApp } from '../support/lock-app.js';

/**
 * Found by review (thirty-third session). Sentinel options with `failoverDetector: true` (what
 * docs/deployment.md asks for): when the sentinels announce a failover (`+switch-master`), ioredis
 * ends the connection's socket to the old master and reconnects through the sentinels once that
 * socket has closed, waiting up to its `disconnectTimeout` (2 s by default) for the old master to
 * close its side. A frozen master (SIGSTOP, a paused VM, a partition: what a failover is for)
 * never does: the module's own connections stayed on it that long after the failover, every lock
 * call, renewal and waiter's subscription waiting with them. The module waited at most
 * `CLOSE_WAIT_MS` only at `app.close()` (lib/core/stores/redis/drivers/ioredis-prompt-close.ts).
 * The application's options here ask 60 s, which shows the wait plainly: a lock call made once the
 * sentinels named the new master got nothing within its `waitTimeout` of 20 s.
 */
describe('Sentinel options with failoverDetector, the master frozen and failed over', () => {
  it('a lock call made once the sentinels name the new master is answered there', { timeout: 120_000 }, async () => {
    const deployment = await startSentinelDeployment();
    const masterPort = await deployment.masterPortNow();
    const master = new Redis(masterPort, '127.0.0.1');
    const pid = Number(/process_id:(\d+)/.exec(await master.info('server'))![1]);
    master.disconnect();
    try {
      const app = await createLockApp({ redis: { sentinels: deployment.sentinels, name: deployment.name, failoverDetector: true, disconnectTimeout: 60_000 } as never });
      try {
        await (await app.locks.acquire('s33-sentinel:before')).release();
        process.kill(pid, 'SIGSTOP');
        await expect.poll(() => deployment.masterPortNow(), { timeout: 60_000, interval: 200 }).not.toBe(masterPort);
        const outcome = await app.locks.acquire('s33-sentinel:after', { waitTimeout: 20_000 }).then(
          (lock) => lock.release().then(() => 'acquired'),
          (error: Error) => `${error.name}: ${error.message}`,
        );
        // Before: LockNotAcquiredError, the connection still waiting for the frozen master to close.
        expect(outcome).toBe('acquired');
      } finally {
        await app.close();
      }
    } finally {
      process.kill(pid, 'SIGCONT');
      await deployment.stop();
    }
  });
});
