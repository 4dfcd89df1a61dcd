import { Test } from '@nestjs/testing';
import { TerminusModule } from '@nestjs/terminus';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LockNotAcquiredError, LockNotReplicatedError, LockService, RedisLockModule } from '../../lib/index.js';
import { RedisLockHealthIndicator } from '../../lib/terminus/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

/**
 * `waitForReplicas: { replicas: 1 }` on a master whose only replica is gone: every acquisition
 * fails with LockNotAcquiredError (cause LockNotReplicatedError), so no lock can be taken at all.
 * The Terminus indicator is what an orchestrator reads to take such an instance out of service;
 * docs/observability.md says a Cluster master that is down makes the check `down` "since the keys
 * of its slots cannot be locked". Here no key can be locked, and the check said `up`.
 */
describe('the terminus indicator with waitForReplicas while the replica is gone', () => {
  let master: RedisServer;
  let replica: RedisServer;
  beforeAll(async () => {
    master = await startRedisServer();
    replica = await startRedisServer(['--replicaof', '127.0.0.1', String(master.port), '--dir', mkdtempSync(join(tmpdir(), 'replica-'))]);
    const probe = new Redis(master.url);
    const until = Date.now() + 20_000;
    while (!/slave0:.*state=online/.test(await probe.info('replication'))) {
      if (Date.now() > until) throw new Error('the replica did not sync');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    probe.disconnect();
  }, 60_000);
  afterAll(async () => {
    await replica?.stop({ kill: true });
    await master?.stop();
  });

  it('reports down (or at least not plain up) while every acquisition fails for want of a replica', { timeout: 60_000 }, async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [TerminusModule.forRoot({ logger: false }), RedisLockModule.forRoot({ redis: master.url, waitForReplicas: { replicas: 1, timeout: 200 } })],
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

      await replica.stop({ kill: true });
      const probe = new Redis(master.url);
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
