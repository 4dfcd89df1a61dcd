import { GlideClient } from '@valkey/valkey-glide';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createLockApp } from '../support/lock-app.js';
import { nodeRedisClient } from '../support/node-redis.js';
import { clientsOf, useQuorumServers } from '../support/quorum-nodes.js';

/**
 * Asked in the fortieth session: one master on ioredis, one on node-redis and one on Valkey GLIDE
 * (each driver writes, retries and times out its commands in its own way). Found no defect: a
 * lock is granted, renewed and released on all three, and app.close() right after any one of
 * them froze ends (without waiting shutdownTimeout) and its release reaches it once it resumes.
 */
describe('quorum over three drivers', () => {
  const servers = useQuorumServers();

  for (const frozen of [0, 1, 2]) {
    it(`holds, renews, releases, and closes past master ${frozen} frozen`, { timeout: 60_000 }, async () => {
      const io = clientsOf(servers.slice(0, 1))[0]!; // the first master's alone: the others' would never be closed
      const node = await nodeRedisClient(servers[1]!.url);
      const url = new URL(servers[2]!.url);
      const glide = await GlideClient.createClient({ addresses: [{ host: url.hostname, port: Number(url.port) }], requestTimeout: 5_000 });
      const admins = servers.map((server) => new Redis(server.url));
      // Far longer than the test: a close that waits for the frozen master cannot end in it.
      const app = await createLockApp({ redis: [io, node, glide] as never, ttl: 1_500, shutdownTimeout: '120s' });
      let closed = false;
      try {
        const name = `mixed-${frozen}`;
        const key = `lock:{${name}}`;
        const lock = await app.locks.acquire(name);
        for (const admin of admins) await expect.poll(() => admin.get(key)).not.toBeNull();
        // Cut short: only a renewal (every third of the 1.5 s lease) puts each back above a second.
        for (const admin of admins) await admin.pexpire(key, 1_000);
        for (const admin of admins) await expect.poll(() => admin.pttl(key), { timeout: 10_000 }).toBeGreaterThan(1_000);
        servers[frozen]!.pause();
        await lock.release();
        void app.close().then(() => (closed = true));
        await expect.poll(() => closed, { timeout: 15_000 }).toBe(true);
        servers[frozen]!.resume();
        for (const admin of admins) await expect.poll(() => admin.exists(key)).toBe(0);
      } finally {
        servers[frozen]!.resume();
        if (!closed) await app.close();
        io.disconnect();
        await node.close();
        glide.close();
        for (const admin of admins) admin.disconnect();
      }
    });
  }
});
