/**
 * Defect: after a failover demotes the server the locks' client is connected to (it becomes a
 * replica, read-only), every acquisition fails with READONLY, but the Terminus indicator keeps
 * answering `up`: it only PINGs, and a replica answers PING.
 *
 * This is what a DNS-endpoint failover (a managed Redis's primary endpoint, a Kubernetes Service
 * in front of a master/replica pair) leaves behind: the client's connection stays open to the
 * old master, now a replica. The indicator's own reasoning for `waitForReplicas` ("fewer than
 * it asks for is `down`, since every acquisition fails") applies here as well; an orchestrator
 * probing it never takes the instance out of rotation or restarts it.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LockService } from '../../lib/index.js';
import { RedisLockHealthIndicator } from '../../lib/terminus/index.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { terminusLockModule } from '../support/terminus-app.js';

describe('the terminus indicator when the server it reaches turned into a read-only replica', () => {
  let server: RedisServer;
  let other: RedisServer;
  beforeAll(async () => {
    [server, other] = await Promise.all([startRedisServer(), startRedisServer()]);
  });
  afterAll(() => Promise.all([server.stop(), other.stop()]));

  it('reports down while every acquisition is refused with READONLY', async () => {
    const client = new Redis(server.url);
    const moduleRef = await terminusLockModule(client, { waitTimeout: 0 });
    const admin = new Redis(server.url);
    try {
      const locks = moduleRef.get(LockService);
      const health = moduleRef.get(RedisLockHealthIndicator);
      await (await locks.acquire('failover:1')).release();
      expect((await health.isHealthy('locks')).locks.status).toBe('up');

      // The failover: the old master is told to follow the promoted one.
      const { port } = new URL(other.url);
      await admin.replicaof('127.0.0.1', port);
      await expect(locks.acquire('failover:2')).rejects.toThrow(/READONLY/);

      const result = await health.isHealthy('locks');
      expect(result.locks.status).toBe('down');
    } finally {
      await admin.replicaof('NO', 'ONE').catch(() => undefined);
      admin.disconnect();
      await moduleRef.close();
      client.disconnect();
    }
  });
});

describe('the terminus indicator when Redis is out of memory (maxmemory, noeviction)', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterAll(() => server.stop());

  it('reports down while every acquisition is refused with OOM', async () => {
    const client = new Redis(server.url);
    const moduleRef = await terminusLockModule(client, { waitTimeout: 0 });
    const admin = new Redis(server.url);
    try {
      const locks = moduleRef.get(LockService);
      const health = moduleRef.get(RedisLockHealthIndicator);
      await (await locks.acquire('oom:1')).release();
      await admin.config('SET', 'maxmemory-policy', 'noeviction');
      await admin.config('SET', 'maxmemory', '1');
      await expect(locks.acquire('oom:2')).rejects.toThrow(/OOM/);
      expect((await health.isHealthy('locks')).locks.status).toBe('down');
    } finally {
      await admin.config('SET', 'maxmemory', '0').catch(() => undefined);
      admin.disconnect();
      await moduleRef.close();
      client.disconnect();
    }
  });
});
