import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSentinelDeployment, type SentinelDeployment } from '../../scripts/redis-sentinel.mjs';
import { LockScripts } from '../../lib/core/stores/redis/lock-scripts.js';
import { createLockApp, sleep } from '../support/lock-app.js';

describe('Redis Sentinel (master, replica, 3 sentinels)', () => {
  let deployment: SentinelDeployment;
  beforeAll(async () => {
    deployment = await startSentinelDeployment();
  }, 60_000);
  afterAll(() => deployment?.stop());

  it('survives a failover: replicated locks stay held, a lost one is reported, new locks work', { timeout: 60_000 }, async () => {
    // failoverDetector: ioredis follows +switch-master at once instead of waiting for the old
    // master to drop its connections; without it, renewals may keep going to the old master.
    const app = await createLockApp({
      redis: { sentinels: deployment.sentinels, name: deployment.name, failoverDetector: true },
      ttl: 3_000,
      renewInterval: 300,
    });
    try {
      const kept = await app.locks.acquire('kept');
      const dropped = await app.locks.acquire('dropped');
      const master = new Redis(deployment.masterPort, '127.0.0.1');
      expect(await master.exists('lock:{kept}', 'lock:{dropped}')).toBe(2);
      master.disconnect();
      // Make sure both writes reached the replica before it is promoted.
      const replica = new Redis(deployment.replicaPort, '127.0.0.1');
      while ((await replica.exists('lock:{kept}', 'lock:{dropped}')) < 2) await sleep(20);
      replica.disconnect();

      const newMasterPort = await deployment.failover();
      expect(newMasterPort).toBe(deployment.replicaPort);
      // Asynchronous replication can lose a lock in a failover: play that out for "dropped".
      const promoted = new Redis(newMasterPort, '127.0.0.1');
      await promoted.del('lock:{dropped}');

      await new Promise((resolve) => (dropped.signal.aborted ? resolve(undefined) : dropped.signal.addEventListener('abort', resolve, { once: true })));
      expect(dropped.signal.reason).toMatchObject({ reason: expect.stringMatching(/refused|expired/) });
      await sleep(1_000);

      expect(kept.held).toBe(true);
      expect(kept.signal.aborted).toBe(false);
      // Renewals reach the new master.
      expect(await promoted.pttl('lock:{kept}')).toBeGreaterThan(1_500);

      const after = await app.locks.acquire('after-failover', { waitTimeout: 5_000 });
      expect(await promoted.exists('lock:{after-failover}')).toBe(1);
      await after.release();
      await kept.release();
      expect(await promoted.exists('lock:{kept}')).toBe(0);
      promoted.disconnect();
    } finally {
      await app.close();
    }
  });

  it('never reports "not the owner" from a replica, which may be resyncing after a failover', { timeout: 30_000 }, async () => {
    const masterPort = await deployment.masterPortNow();
    const replicaPort = masterPort === deployment.masterPort ? deployment.replicaPort : deployment.masterPort;
    const replica = new Redis(replicaPort, '127.0.0.1');
    const scripts = new LockScripts(replica);
    // Sentinel turns the old master into a replica some time after the failover.
    while ((await replica.role())[0] !== 'slave') await sleep(100);
    try {
      await expect(scripts.renew('lock:{absent}', 'someone', 1_000)).rejects.toThrow(/READONLY this node is a replica/);
      await expect(scripts.renewMany(['lock:{absent}'], ['someone', 1_000])).rejects.toThrow(/READONLY/);
      const keys = { lock: 'lock:{absent}', fence: 'lock:{absent}:fence', queue: 'lock:{absent}:queue', waiters: 'lock:{absent}:waiters', released: 'lock:{absent}:released' };
      await expect(scripts.release(keys, 'someone', 1_000)).rejects.toThrow(/READONLY/);
    } finally {
      replica.disconnect();
    }
  });
});
