import { Cluster } from 'ioredis';
import { Cluster as ValkeyCluster } from 'iovalkey';
import { describe, expect, it, onTestFinished } from 'vitest';
import { RedisUnavailableError } from '../../lib/index.js';
import { startRedisCluster } from '../../scripts/redis-cluster.mjs';
import { createLockApp } from '../support/lock-app.js';
import { lockNameOnMaster } from '../support/redis-cluster.js';

/**
 * Found by a defect hunt (drivers). An ioredis (or iovalkey) Cluster client asks again, up to its
 * maxRedirections (16), a command whose master's connection closed (a master killed, before a
 * replica takes over or it comes back), a MOVED, an ASK, TRYAGAIN or CLUSTERDOWN, then rejects it
 * "Too many Cluster redirections. Last error: Error: Connection is closed.", an error of its own
 * with no code or class name the classification knew. So isLocked(), inspect(), tryAcquire() and
 * extend() of a key of that master failed with a plain RedisLockError (an HTTP route's 500, logged
 * by Nest as a bug), where Redis out of reach for now is a RedisUnavailableError (503 with
 * Retry-After), as docs/guarantees.md says, and as the same call is when it waits past its time
 * instead (RedisUnansweredError). Shown by the error the client gave, not by time.
 */
describe('a Cluster client handed in, one master down', () => {
  // Tried again every 20 ms (100 by default): its 16 tries end within the call's time, and the
  // call fails with the client's error rather than waiting past its time (RedisUnansweredError).
  const clients = {
    ioredis: (nodes: { host: string; port: number }[]) => new Cluster(nodes, { retryDelayOnFailover: 20 }),
    iovalkey: (nodes: { host: string; port: number }[]) => new ValkeyCluster(nodes, { retryDelayOnFailover: 20 }),
  };
  for (const [label, make] of Object.entries(clients)) {
    it(`fails a call on that master's keys that the client gave up redirecting as Redis unavailable (${label})`, { timeout: 60_000 }, async () => {
      const cluster = await startRedisCluster(3);
      onTestFinished(() => cluster.stop());
      const client = make(cluster.nodes);
      client.on('error', () => undefined);
      onTestFinished(() => void client.disconnect());
      await client.ping();
      const app = await createLockApp({ redis: client as Cluster, shutdownTimeout: 600 });
      onTestFinished(() => app.close());
      const key = await lockNameOnMaster(cluster, 0, 'redirected');
      expect(await app.locks.isLocked(key)).toBe(false);
      await cluster.kill(0);
      let redirected: unknown;
      for (let i = 0; i < 20 && redirected === undefined; i++) {
        const error = await app.locks.isLocked(key).then(
          () => undefined,
          (caught: unknown) => caught,
        );
        if (/^Too many Cluster redirections/.test(String((error as Error | undefined)?.cause instanceof Error ? ((error as Error).cause as Error).message : ''))) redirected = error;
      }
      expect(redirected, 'the client gave up redirecting').toBeDefined();
      // Failed: a plain RedisLockError, "isLocked(...): Redis could not be asked (Too many Cluster redirections. Last error: Error: Connection is closed)".
      expect(redirected).toBeInstanceOf(RedisUnavailableError);
    });
  }
});
