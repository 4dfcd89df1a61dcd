import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSentinelDeployment, type SentinelDeployment } from '../../scripts/redis-sentinel.mjs';
import { createLockApp } from '../support/lock-app.js';

/**
 * `waitForReplicas` on Sentinel (docs/deployment.md): acquisitions go on a connection of their
 * own, which must follow a REAL failover like the command connection: once the old master
 * rejoined as the new master's replica, acquisitions work again, on the new master, and the
 * replica holds each lock they return.
 */
describe('waitForReplicas across a Sentinel failover', () => {
  let deployment: SentinelDeployment;
  beforeAll(async () => {
    deployment = await startSentinelDeployment();
  }, 60_000);
  afterAll(() => deployment?.stop());

  it('acquires with WAIT on the new master once its replica is back', { timeout: 90_000 }, async () => {
    const app = await createLockApp({
      redis: { sentinels: deployment.sentinels, name: deployment.name, failoverDetector: true },
      ttl: 5_000,
      renewInterval: 500,
      waitForReplicas: { replicas: 1, timeout: 1_000 },
    });
    try {
      const before = await app.locks.acquire('wfr:before');
      const oldPort = await deployment.masterPortNow();
      const newPort = await deployment.failover();
      expect(newPort).not.toBe(oldPort);
      const promoted = new Redis(newPort, '127.0.0.1');
      const demoted = new Redis(oldPort, '127.0.0.1');
      try {
        // The old master is the new one's replica, in sync.
        await expect.poll(async () => /slave0:.*state=online/.test(await promoted.info('replication')), { timeout: 30_000 }).toBe(true);
        const after = await app.locks.acquire('wfr:after', { waitTimeout: 20_000 });
        expect(await promoted.exists('lock:{wfr:after}')).toBe(1);
        expect(await demoted.exists('lock:{wfr:after}')).toBe(1);
        expect(await demoted.get('lock:{wfr:after}:fence')).toBe(String(after.fencingToken));
        await after.release();
        expect(before.held).toBe(true);
        await before.release();
      } finally {
        promoted.disconnect();
        demoted.disconnect();
      }
    } finally {
      await app.close();
    }
  });
});
