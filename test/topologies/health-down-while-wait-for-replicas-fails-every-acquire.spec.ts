import { Test } from '@nestjs/testing';
import { TerminusModule } from '@nestjs/terminus';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { LockNotAcquiredError, LockNotReplicatedError, LockService, RedisLockModule } from '../../lib/index.js';
import { RedisLockHealthIndicator } from '../../lib/terminus/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { useReplicatedServer } from '../support/replicated-server.js';

/**
 * `waitForReplicas: { replicas: 1 }` on a master whose only replica is gone: every acquisition
 * fails with LockNotAcquiredError (cause LockNotReplicatedError), so no lock can be taken at all.
 * The Terminus indicator is what an orchestrator reads to take such an instance out of service;
 * docs/observability.md says a Cluster master that is down makes the check `down` "since the keys
 * of its slots cannot be locked". Here no key can be locked, and the check said `up`.
 */
describe('the terminus indicator with waitForReplicas while the replica is gone', () => {
  const servers = useReplicatedServer();

  it('reports down (or at least not plain up) while every acquisition fails for want of a replica', { timeout: 60_000 }, async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [TerminusModule.forRoot({ logger: false }), RedisLockModule.forRoot({ redis: servers.master.url, waitForReplicas: { replicas: 1, timeout: 200 } })],
      providers: [RedisLockHealthIndicator],
    })
      .setLogger(new CapturedLogs())
      .compile();
    await moduleRef.init();
    try {
      const locks = moduleRef.get(LockService);
      const indicator = moduleRef.get(RedisLockHealthIndicator);
      // Control: with the replica up, locks work and the check is up.
      await (await locks.acquire('health:control')).release();
      expect((await indicator.isHealthy('locks')).locks).toMatchObject({ status: 'up', replicas: { online: 1, needed: 1 } });

      await servers.replica.stop({ kill: true });
      const probe = new Redis(servers.master.url);
      await expect.poll(async () => /connected_slaves:0/.test(await probe.info('replication')), { timeout: 20_000 }).toBe(true);
      probe.disconnect();

      // Every acquisition now fails: the replica cannot confirm.
      for (const key of ['health:a', 'health:b', 'health:c']) {
        const error = await locks.acquire(key, { waitTimeout: 0 }).then(
          () => undefined,
          (failed: unknown) => failed,
        );
        expect(error).toBeInstanceOf(LockNotAcquiredError);
        expect((error as Error).cause).toBeInstanceOf(LockNotReplicatedError);
      }
      const health = await indicator.isHealthy('locks');
      // It said up (it only PINGed the master).
      expect(health.locks).toMatchObject({ status: 'down', replicas: { online: 0, needed: 1 } });
    } finally {
      await moduleRef.close();
    }
  });
});
