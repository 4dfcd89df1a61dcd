import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidLockOptionsError, LockNotAcquiredError, LockNotReplicatedError, type Lock } from '../../lib/index.js';
import { LockScripts } from '../../lib/core/stores/redis/lock-scripts.js';
import type { SentinelDeployment } from '../../scripts/redis-sentinel.mjs';
import { useSentinelPair } from '../support/sentinel-pair.js';
import { createLockApp, pendingAfter, sleep, type LockApp } from '../support/lock-app.js';

describe('waitForReplicas (master, replica, 3 sentinels; issue 23, item 5)', () => {
  const pair = useSentinelPair();
  let deployment: SentinelDeployment;
  let master: Redis;
  let replica: Redis;
  let replicaPid: number;
  const apps: LockApp[] = [];

  beforeAll(() => void ({ deployment, master, replica, replicaPid } = pair));
  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
  });

  async function open(options: Parameters<typeof createLockApp>[0] = {}): Promise<LockApp> {
    const app = await createLockApp({ redis: { sentinels: deployment.sentinels, name: deployment.name, failoverDetector: true }, ttl: 10_000, ...options });
    apps.push(app);
    // Connections up and scripts cached before the replica is frozen.
    await (await app.locks.acquire(`warm:${apps.length}`)).release();
    return app;
  }

  /**
   * Freezes the replica (SIGSTOP) while `during` runs; it answers nothing, replication included.
   * `during` resolves a box, so that a promise in it is not awaited before the replica thaws.
   */
  async function withFrozenReplica<T>(during: () => Promise<T>): Promise<T> {
    process.kill(replicaPid, 'SIGSTOP');
    try {
      return await during();
    } finally {
      process.kill(replicaPid, 'SIGCONT');
    }
  }

  async function onReplica(lock: Lock): Promise<{ owner: string | null; fence: string | null }> {
    const [owner, fence] = await Promise.all([replica.get(`lock:{${lock.key}}`), replica.get(`lock:{${lock.key}}:fence`)]);
    return { owner, fence };
  }

  it('hands out an acquisition only once the replica has the lock and its fencing counter', { timeout: 30_000 }, async () => {
    const app = await open({ waitForReplicas: { replicas: 1, timeout: 5_000 } });
    const { acquire } = await withFrozenReplica(async () => {
      const acquire = app.locks.acquire('replicated');
      expect(await pendingAfter(acquire, 300)).toBe(true);
      return { acquire };
    });
    const lock = await acquire;
    expect(await onReplica(lock)).toEqual({ owner: expect.any(String), fence: String(lock.fencingToken) });
    await lock.release();
  });

  it('without the option, an acquisition is handed out before any replica has it', { timeout: 30_000 }, async () => {
    const app = await open();
    const lock = await withFrozenReplica(() => app.locks.acquire('unreplicated')); // settles with the replica frozen
    expect(lock.held).toBe(true);
    await lock.release();
  });

  it('waits for the replica before handing out a lock a release passed on', { timeout: 30_000 }, async () => {
    const app = await open({ waitForReplicas: { replicas: 1, timeout: 5_000 } });
    const other = await open({ waitForReplicas: { replicas: 1, timeout: 5_000 } });
    const held = await app.locks.acquire('handover');
    const waiting = other.locks.acquire('handover', { waitTimeout: 15_000 });
    await sleep(300); // queued and subscribed
    await withFrozenReplica(async () => {
      await held.release();
      expect(await pendingAfter(waiting, 300)).toBe(true);
    });
    const next = await waiting;
    // The release's grant took one token, the acquire that confirmed it the next (a token the
    // counter stands at may be a same-named semaphore's).
    expect(next.fencingToken).toBe(held.fencingToken + 2);
    expect(await onReplica(next)).toEqual({ owner: expect.any(String), fence: String(next.fencingToken) });
    await next.release();
  });

  it('waits for the replica before handing out a semaphore permit or a read lock', { timeout: 30_000 }, async () => {
    const app = await open({ waitForReplicas: { replicas: 1, timeout: 5_000 } });
    const { permit, reader } = await withFrozenReplica(async () => {
      const permit = app.locks.acquire('replicated:semaphore', { limit: 2 });
      const reader = app.locks.acquire('replicated:read', { mode: 'read' });
      expect(await pendingAfter(Promise.race([permit, reader]), 300)).toBe(true);
      return { permit, reader };
    });
    for (const lock of [await permit, await reader]) {
      expect(await replica.get(`lock:{${lock.key}}:fence`)).toBe(String(lock.fencingToken));
      await lock.release();
    }
  });

  it('fails with LockNotReplicatedError as the cause, and gives the lock back, when the replica does not confirm in time', { timeout: 30_000 }, async () => {
    const app = await open({ waitForReplicas: { replicas: 1, timeout: 200 } });
    const error = await withFrozenReplica(() => app.locks.acquire('stuck', { waitTimeout: 0 }).then(
      () => undefined,
      (failed: unknown) => failed,
    ));
    expect(error).toBeInstanceOf(LockNotAcquiredError);
    expect((error as Error).cause).toBeInstanceOf(LockNotReplicatedError);
    expect((error as Error).cause).toMatchObject({ reached: 0, replicas: 1, timeout: 200 });
    expect((error as Error).message).toMatch(/reached 0 of 1 replica within 200 ms \(waitForReplicas\)/);
    expect(await master.exists('lock:{stuck}')).toBe(0);
    // With the replica back, the same call succeeds.
    const lock = await app.locks.acquire('stuck', { waitTimeout: 0 });
    expect(await onReplica(lock)).toEqual({ owner: expect.any(String), fence: String(lock.fencingToken) });
    await lock.release();
  });

  // Found by review (thirty-fifth session): refused as "in quorum mode" for an array of one.
  it('waits the same for redis: [connection], an array of one, which is that connection', { timeout: 30_000 }, async () => {
    const app = await open({ redis: [{ sentinels: deployment.sentinels, name: deployment.name, failoverDetector: true }], waitForReplicas: { replicas: 1, timeout: 200 } });
    const error = await withFrozenReplica(() => app.locks.acquire('stuck-in-array', { waitTimeout: 0 }).then(
      () => undefined,
      (failed: unknown) => failed,
    ));
    expect((error as Error).cause).toBeInstanceOf(LockNotReplicatedError);
    const lock = await app.locks.acquire('stuck-in-array', { waitTimeout: 0 });
    expect(await onReplica(lock)).toEqual({ owner: expect.any(String), fence: String(lock.fencingToken) });
    await lock.release();
  });

  it('refuses a Redis Cluster client, which it does not support yet, with an error naming the option', () => {
    const cluster = new Cluster([{ host: '127.0.0.1', port: 1 }], { lazyConnect: true });
    try {
      expect(() => new LockScripts(cluster, 0, { replicas: 1, timeout: 100 })).toThrow(InvalidLockOptionsError);
      expect(() => new LockScripts(cluster, 0, { replicas: 1, timeout: 100 })).toThrow(/Option "waitForReplicas" must be left out with this connection/);
    } finally {
      cluster.disconnect();
    }
  });
});
