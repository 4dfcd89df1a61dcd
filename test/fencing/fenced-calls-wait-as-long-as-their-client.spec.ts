import { Cluster, Redis } from 'ioredis';
import { describe, expect, it, onTestFinished } from 'vitest';
import { FencedRedis, RedisLockError, RedisUnavailableError } from '../../lib/index.js';
import { startRedisCluster } from '../../scripts/redis-cluster.mjs';
import { startRedisServer } from '../support/redis-server.js';

/**
 * docs/fencing.md: FencedRedis puts no bound of its own on a call; it waits as long as its client
 * does. Reviewed (session 50) after a helper found a write and a plain read pending for ever on a
 * Cluster whose masters were all down (ioredis' offline queue on), and with
 * `maxRetriesPerRequest: null` on one server down: that is the client's own queue, and the
 * documented remedy is the client's. On one server, `commandTimeout` bounds the calls (the write
 * rejects as one that may have been applied, the read as Redis unavailable). On a Cluster it does
 * not: a command waiting in the Cluster client's own queue (its slot map refresh failed on every
 * node) has reached no node connection, where `redisOptions.commandTimeout` applies; there
 * `enableOfflineQueue: false` refuses the calls unsent
 * (test/topologies/ioredis-cluster-all-masters-down-slots-refresh-failed-unavailable.spec.ts).
 */
type Settled = { value: unknown } | { error: unknown };
const settle = (call: Promise<unknown>, into: Settled[]): Promise<void> => call.then((value) => void into.push({ value }), (error: unknown) => void into.push({ error }));

describe('FencedRedis calls wait as long as their client does', () => {
  it('one server down, maxRetriesPerRequest: null: commandTimeout bounds the write and the read; without it they stay queued', { timeout: 60_000 }, async () => {
    const server = await startRedisServer();
    onTestFinished(() => server.stop());
    const make = (options: object): Redis => {
      const client = new Redis(server.url, { maxRetriesPerRequest: null, ...options });
      client.on('error', () => undefined);
      onTestFinished(() => void client.disconnect());
      return client;
    };
    const bounded = new FencedRedis(make({ commandTimeout: 1_000 }));
    const queueing = new FencedRedis(make({}));
    await bounded.set('deposit:{7}', '1', 5);
    await queueing.set('deposit:{7}', '2', 5);
    await server.stop({ kill: true });
    const unbounded: Settled[] = [];
    const waits = [settle(queueing.set('deposit:{7}', '3', 5), unbounded), settle(queueing.get('deposit:{7}'), unbounded)];
    const write = await bounded.set('deposit:{7}', '4', 5).then(() => 'written', (error: unknown) => error);
    expect(write).toBeInstanceOf(RedisLockError);
    expect((write as Error).message).toMatch(/^FencedRedis\.set\(\): the write to "deposit:\{7\}" may have been applied: Redis did not answer it \(Command timed out\)/);
    const read = await bounded.get('deposit:{7}').then(() => 'read', (error: unknown) => error);
    expect(read).toBeInstanceOf(RedisUnavailableError);
    expect(String((read as Error).cause)).toMatch(/Command timed out/);
    // The client without commandTimeout still holds both, reconnecting.
    expect(unbounded).toEqual([]);
    // Once Redis is back, they are sent and answered.
    await server.start();
    await Promise.all(waits);
    expect(unbounded).toHaveLength(2);
  });

  it('every Cluster master down: redisOptions.commandTimeout does not bound a call the Cluster client queued', { timeout: 90_000 }, async () => {
    const cluster = await startRedisCluster(3);
    onTestFinished(() => cluster.stop());
    const client = new Cluster(cluster.nodes, { redisOptions: { commandTimeout: 1_000 } });
    const errors: Error[] = [];
    client.on('error', (error: Error) => errors.push(error));
    onTestFinished(() => void client.disconnect());
    await new Promise((ready) => client.once('ready', ready));
    const fenced = new FencedRedis(client as never);
    await fenced.set('deposit:{7}', '1', 5);
    for (let i = 0; i < 3; i++) await cluster.kill(i);
    // A call sent while the client may still count the Cluster ready (on a node's connection, where
    // the timeout applies) has it find its slot map refresh failing on every node; then it queues.
    void settle(fenced.set('deposit:{7}', '2', 5), []);
    await expect.poll(() => errors.map((error) => error.constructor.name), { timeout: 20_000 }).toContain('ClusterAllFailedError');
    await expect.poll(() => client.status, { timeout: 20_000 }).toBe('reconnecting');
    const queued: Settled[] = [];
    void settle(fenced.set('deposit:{7}', '3', 5), queued);
    void settle(fenced.get('deposit:{7}'), queued);
    // A bounded call sent after them on one node's connection would have timed out by now: the
    // Cluster's queue never hands them to one (a mechanism, not a speed: they wait for a master).
    const probe = new Redis(cluster.nodes[0]!.port, cluster.nodes[0]!.host, { commandTimeout: 1_000, maxRetriesPerRequest: null, lazyConnect: false });
    probe.on('error', () => undefined);
    onTestFinished(() => void probe.disconnect());
    const timedOut = await probe.get('x').then(() => 'answered', (error: Error) => error.message);
    expect(timedOut).toBe('Command timed out');
    expect(queued).toEqual([]);
  });
});
