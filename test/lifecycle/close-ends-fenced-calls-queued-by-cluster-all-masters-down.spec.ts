/**
 * docs/fencing.md (the injected FencedRedis waits for Redis only until `app.close()` gave the
 * locks back) on a Cluster client handed in whose masters are all down, ioredis' offline queue on
 * (its default): the client keeps a write and a plain read in its own queue, unsent and without a
 * bound (its `commandTimeout` does not apply to that queue), until a master is back.
 *
 * Reviewed (session 50) because a helper found such calls pending for ever: `app.close()` still
 * ends within `shutdownTimeout`, the write rejecting as one that may have been applied (the client
 * handed in still holds it in its queue), the read with the shutdown refusal. Passed as found: no
 * fix (the process exits on its own once the application disconnects its client: seen in a scratch
 * run, not kept as a test).
 */
import 'reflect-metadata';
import { Cluster } from 'ioredis';
import { Test } from '@nestjs/testing';
import { describe, expect, it, onTestFinished } from 'vitest';
import { FencedRedis, LockService, LockServiceClosedError, RedisLockError, RedisLockModule } from '../../lib/index.js';
import { startRedisCluster } from '../../scripts/redis-cluster.mjs';
import { closesWithin } from '../support/frozen-redis.js';
import { CapturedLogs } from '../support/lock-app.js';

describe('app.close() while the injected FencedRedis waits in a Cluster client\'s offline queue, every master down', () => {
  it('ends within shutdownTimeout; the write rejects as one that may have been applied, the read with the shutdown refusal', { timeout: 90_000 }, async () => {
    const cluster = await startRedisCluster(3);
    onTestFinished(() => cluster.stop());
    // ioredis' defaults: the offline queue on.
    const client = new Cluster(cluster.nodes);
    const errors: Error[] = [];
    client.on('error', (error: Error) => errors.push(error));
    onTestFinished(() => void client.disconnect());
    await new Promise((ready) => client.once('ready', ready));
    const moduleRef = await Test.createTestingModule({ imports: [RedisLockModule.forRoot({ redis: client as never, shutdownTimeout: '1s' })] })
      .setLogger(new CapturedLogs())
      .compile();
    await moduleRef.init();
    // app.close() once: by the test (closesWithin), else here.
    let closeCalled = false;
    onTestFinished(async () => {
      if (!closeCalled) await moduleRef.close();
    });
    const fenced = moduleRef.get(FencedRedis);
    const lock = await moduleRef.get(LockService).acquire('wallet:{7}');
    await fenced.set('wallet:{7}:data', '1', lock.fencingToken!);
    for (let i = 0; i < 3; i++) await cluster.kill(i);
    // The state under review: the client's slot map refresh failed on every node, and it queues.
    await expect.poll(() => errors.map((error) => error.constructor.name), { timeout: 20_000 }).toContain('ClusterAllFailedError');
    const settled: Record<string, unknown> = {};
    const track = (name: string, call: Promise<unknown>): Promise<unknown> => call.then((value) => (settled[name] = { value }), (error: unknown) => (settled[name] = error));
    const calls = [track('set', fenced.set('wallet:{7}:data', '2', lock.fencingToken!)), track('get', fenced.get('wallet:{7}:data'))];
    // Queued by the client, not refused: still unsettled while it reconnects.
    await expect.poll(() => client.status, { timeout: 20_000 }).toBe('reconnecting');
    expect(settled).toEqual({});
    closeCalled = true;
    await closesWithin(moduleRef, 15_000);
    await Promise.all(calls);
    expect(settled.set).toBeInstanceOf(RedisLockError);
    expect((settled.set as Error).message).toMatch(/^FencedRedis\.set\(\): the write to "wallet:\{7\}:data" may have been applied: Redis did not answer it \(LockService shut down/);
    expect(settled.get).toBeInstanceOf(LockServiceClosedError);
    expect((settled.get as Error).message).toMatch(/^FencedRedis\.get\(\): LockService shut down \(the application is closing\)/);
  });
});
