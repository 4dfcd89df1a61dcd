import { Cluster } from 'ioredis';
import { Cluster as ValkeyCluster } from 'iovalkey';
import { describe, expect, it, onTestFinished } from 'vitest';
import { FencedRedis, LockService, RedisUnavailableError } from '../../lib/index.js';
import { RedisLockHealthIndicator } from '../../lib/terminus/index.js';
import { startRedisCluster } from '../../scripts/redis-cluster.mjs';
import { terminusLockModule } from '../support/terminus-app.js';

/**
 * An ioredis (or iovalkey) Cluster client handed in, every master stopped: the client's slot map
 * refresh fails on every node, which it says only on its `error` event ("Failed to refresh slots
 * cache.", a `ClusterAllFailedError`), and it waits to reconnect. Reviewed (session 50) because
 * that error was not known as passing: it reaches none of the calls (ioredis 5.9 and 6, iovalkey
 * 0.4 reject a command with it nowhere), which fail as Redis unavailable for now (503 with
 * Retry-After) as one master down does
 * (test/topologies/ioredis-cluster-master-down-too-many-redirections-plain-error.spec.ts):
 * failing fast (`enableOfflineQueue: false`), isLocked(), tryAcquire(), inspect() and the fenced
 * calls with the client's "Cluster isn't ready ..." refusal, and the Terminus check is down on
 * it; queueing, a lock call waits its bound (RedisUnansweredError). A plain read and fence() of
 * FencedRedis rejected with the client's bare "Cluster isn't ready ..." error, no RedisLockError,
 * where the write beside them was a RedisUnavailableError (failing test first).
 */
describe('a Cluster client handed in, every master down', () => {
  const clients = {
    ioredis: (nodes: { host: string; port: number }[], options: object) => new Cluster(nodes, options),
    iovalkey: (nodes: { host: string; port: number }[], options: object) => new ValkeyCluster(nodes, options) as unknown as Cluster,
  };
  for (const [label, make] of Object.entries(clients)) {
    it(`fails the lock calls, the fenced calls and the health check as Redis unavailable, the client failing fast (${label})`, { timeout: 60_000 }, async () => {
      const cluster = await startRedisCluster(3);
      onTestFinished(() => cluster.stop());
      const client = make(cluster.nodes, { enableOfflineQueue: false });
      const errors: Error[] = [];
      client.on('error', (error: Error) => errors.push(error));
      onTestFinished(() => void client.disconnect());
      await new Promise((ready) => client.once('ready', ready));
      const moduleRef = await terminusLockModule(client);
      onTestFinished(() => moduleRef.close());
      const locks = moduleRef.get(LockService);
      const health = moduleRef.get(RedisLockHealthIndicator);
      const fenced = new FencedRedis(client as never);
      expect(await locks.isLocked('k:{a}')).toBe(false);
      for (let i = 0; i < 3; i++) await cluster.kill(i);
      // The state under review: the client's slot map refresh failed on every node.
      await expect.poll(() => errors.map((error) => error.constructor.name), { timeout: 20_000 }).toContain('ClusterAllFailedError');
      const calls: Record<string, () => Promise<unknown>> = {
        isLocked: () => locks.isLocked('k:{a}'),
        tryAcquire: () => locks.tryAcquire('k:{b}'),
        inspect: () => locks.inspect('k:{a}'),
        'FencedRedis.set': () => fenced.set('w:{a}', '1', 5),
        'FencedRedis.get with a token': () => fenced.get('w:{a}', 5),
        'FencedRedis.get': () => fenced.get('w:{a}'),
        'FencedRedis.hget': () => fenced.hget('h:{a}', 'f'),
        'FencedRedis.fence': () => fenced.fence('w:{a}'),
      };
      for (const [name, call] of Object.entries(calls)) {
        const error = await call().then(
          () => new Error('resolved'),
          (caught: unknown) => caught as Error,
        );
        // Failed (the plain reads and fence()): Error: Cluster isn't ready and enableOfflineQueue options is false.
        expect(error, `${name}: ${error.message}`).toBeInstanceOf(RedisUnavailableError);
        expect(String((error.cause as Error | undefined)?.message), name).toMatch(/^Cluster isn't ready/);
      }
      const checked = (await health.isHealthy('redis', { timeout: 2_000, showDetails: true })) as unknown as { redis: { status: string; nodes: { status: string }[] } };
      expect(checked.redis.status).toBe('down');
      expect(checked.redis.nodes.every((node) => node.status === 'down')).toBe(true);
    });
  }
});
