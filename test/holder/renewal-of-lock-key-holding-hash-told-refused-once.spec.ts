import { Cluster, Redis } from 'ioredis';
import { describe, expect, it, onTestFinished } from 'vitest';
import { LockLostError, RedisLockError, type LockEvent } from '../../lib/index.js';
import { startRedisServer } from '../support/redis-server.js';
import { startRedisCluster } from '../../scripts/redis-cluster.mjs';
import { createLockApp, type LockApp } from '../support/lock-app.js';
import { lockNameOnMaster } from '../support/redis-cluster.js';
import { CLIENTS_ON_URL } from '../support/clients-on-url.js';

/**
 * Found by review of d3294729. The watchdog's batch answers ELSEWHERE for a lock whose key holds a
 * hash (written there by something else), and the client renews that lock alone, whose refusal
 * (WRONGTYPE) it swallowed and left the lock ELSEWHERE: on a Cluster "not known lost", renewed
 * alone again at every tick and refused again, and in quorum mode (the hash on a majority) neither
 * renewed nor refused by a majority, alike, each holder told only as its lease ran out, reason
 * 'expired' ("Redis unreachable or the event loop blocked"); on one Redis it was lost 'refused'
 * with nothing said of the hash. Redis' word on a declared key is final: the holder is told at
 * once, reason 'refused', its cause naming the data this library did not write. A lease of a
 * minute shows it: the loss comes from the refusal, not from the lease running out.
 */
describe('a held lock whose key is overwritten with a hash', () => {
  async function toldOnce(app: LockApp, key: string, overwrite: (lockKey: string) => Promise<void>): Promise<void> {
    const lost: LockEvent[] = [];
    const subscription = app.locks.events$.subscribe((event) => event.type === 'lost' && lost.push(event));
    onTestFinished(() => subscription.unsubscribe());
    const locks = await Promise.all([key, `${key}-other`].map((name) => app.locks.acquire(name, { ttl: 60_000, renewInterval: 200 })));
    onTestFinished(() => Promise.all(locks.map((lock) => lock.release().catch(() => undefined))).then(() => undefined));
    await overwrite(`lock:{${key}}`);
    await expect.poll(() => locks[0]!.signal.aborted, { timeout: 10_000 }).toBe(true);
    const error = locks[0]!.signal.reason as LockLostError;
    expect(error).toBeInstanceOf(LockLostError);
    expect(error.reason).toBe('refused');
    expect(error.cause).toBeInstanceOf(RedisLockError);
    expect((error.cause as Error).message).toMatch(/WRONGTYPE[\s\S]*data this library did not write/);
    expect(lost).toMatchObject([{ type: 'lost', key, reason: 'refused' }]);
    expect(locks[1]!.held).toBe(true);
  }

  it('one Redis: lost at once, its cause naming the hash', { timeout: 30_000 }, async () => {
    const server = await startRedisServer();
    onTestFinished(() => server.stop());
    const admin = new Redis(server.url);
    onTestFinished(() => void admin.disconnect());
    const app = await createLockApp({ redis: server.url });
    onTestFinished(() => app.close());
    await toldOnce(app, 'hash-one', async (lockKey) => void (await admin.del(lockKey), await admin.hset(lockKey, 'f', '1')));
  });

  it.each(['node-redis', 'GLIDE'] as const)('one Redis through %s: lost at once, its cause naming the hash', { timeout: 30_000 }, async (driver) => {
    const server = await startRedisServer();
    onTestFinished(() => server.stop());
    const admin = new Redis(server.url);
    onTestFinished(() => void admin.disconnect());
    const opened = await CLIENTS_ON_URL[driver](server.url);
    onTestFinished(() => opened.close().then(() => undefined));
    const app = await createLockApp({ redis: opened.client as never });
    onTestFinished(() => app.close());
    await toldOnce(app, `hash-${driver}`, async (lockKey) => void (await admin.del(lockKey), await admin.hset(lockKey, 'f', '1')));
  });

  it('a Cluster: lost at once, not renewed alone again at every tick', { timeout: 90_000 }, async () => {
    const cluster = await startRedisCluster(3);
    onTestFinished(() => cluster.stop());
    const client = new Cluster(cluster.nodes);
    onTestFinished(() => void client.disconnect());
    await client.ping();
    const app = await createLockApp({ redis: client });
    onTestFinished(() => app.close());
    const key = await lockNameOnMaster(cluster, 0, 'hash-cluster');
    await toldOnce(app, key, async (lockKey) => void (await client.del(lockKey), await client.hset(lockKey, 'f', '1')));
  });

  it('quorum, the hash on a majority of the masters: lost at once', { timeout: 30_000 }, async () => {
    const servers = await Promise.all([0, 1, 2].map(() => startRedisServer()));
    onTestFinished(() => Promise.all(servers.map((server) => server.stop())).then(() => undefined));
    const admins = servers.map((server) => new Redis(server.url));
    onTestFinished(() => admins.forEach((admin) => admin.disconnect()));
    const app = await createLockApp({ redis: servers.map((server) => server.url) });
    onTestFinished(() => app.close());
    await toldOnce(app, 'hash-quorum', async (lockKey) => {
      // Its grant on every master first (a round ends on a majority: the third's may be on its way).
      await expect.poll(() => Promise.all(admins.map((admin) => admin.exists(lockKey)))).toEqual([1, 1, 1]);
      for (const admin of admins.slice(0, 2)) await admin.del(lockKey), await admin.hset(lockKey, 'f', '1');
    });
  });
});
