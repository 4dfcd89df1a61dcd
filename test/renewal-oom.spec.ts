import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer, type RedisServer } from './support/redis-server.js';
import { sleep, useLockApps } from './support/lock-app.js';

// One Redis: the renew scripts have no flags, so Redis checks memory per command, and PEXPIRE
// (which adds no memory) runs under a full `maxmemory`. The Cluster case, whose per-node script
// has flags, is in test/scale/cluster-hardening.spec.ts.
describe('renewals under a full maxmemory (one Redis)', () => {
  let server: RedisServer;
  let admin: Redis;
  const app = useLockApps();
  beforeAll(async () => {
    server = await startRedisServer();
    admin = new Redis(server.url);
  });
  afterAll(async () => {
    admin?.disconnect();
    await server?.stop();
  });

  it('keeps every lock renewed, by the watchdog and by extend()', async () => {
    const holder = await app({ redis: server.url, ttl: 1_000, renewInterval: 250 });
    const locks = await Promise.all(Array.from({ length: 20 }, (_, i) => holder.locks.acquire(`oom:${i}`)));
    await admin.config('SET', 'maxmemory', '1');
    try {
      await expect(admin.set('oom:probe', 'x')).rejects.toThrow(/OOM/);
      await sleep(2_000);
      expect(locks.filter((lock) => !lock.held)).toEqual([]);
      await locks[0]!.extend(5_000);
      expect(await admin.pttl('lock:{oom:0}')).toBeGreaterThan(2_000);
    } finally {
      await admin.config('SET', 'maxmemory', '0');
    }
    await Promise.all(locks.map((lock) => lock.release()));
  });
});
