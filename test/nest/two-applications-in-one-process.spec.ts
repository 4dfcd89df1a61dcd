import { Injectable, Module, type DynamicModule } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { describe, expect, it, onTestFinished } from 'vitest';
import { LockService, Locked, RedisLockModule, type LockEvent } from '../../lib/index.js';
import { RedisLockMetricsModule } from '../../lib/otel/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { useLockMetrics } from '../support/lock-metrics.js';
import { recordWakes } from '../support/mechanism.js';
import { redisUrl, useRedis } from '../support/redis.js';

/**
 * Two Nest applications in one process (an HTTP application beside a worker context, or two
 * tests' applications in one vitest worker), each with its own `RedisLockModule`, sharing the
 * classes of the code base: each one's `@Locked` methods run through its own `LockService`, its
 * events stay its own, and closing one leaves the other working, its lock metrics included.
 */
describe('two applications in one process, each with its own RedisLockModule', () => {
  const redis = useRedis();

  @Injectable()
  class Orders {
    /** The lock keys in Redis while it runs: the prefix says which application's service took it. */
    @Locked('order:<0>')
    async ship(id: string): Promise<string[]> {
      return redis.keys(`*{order:${id}}`);
    }
  }

  const lockMetrics = useLockMetrics();

  async function application(keyPrefix: string, imports: DynamicModule[] = []): Promise<{ ref: TestingModule; locks: LockService; orders: Orders; events: LockEvent[] }> {
    @Module({ imports: [RedisLockModule.forRoot({ redis: redisUrl(), keyPrefix }), ...imports], providers: [Orders] })
    class AppModule {}
    const ref = await Test.createTestingModule({ imports: [AppModule] }).setLogger(new CapturedLogs()).compile();
    await ref.init();
    onTestFinished(() => ref.close());
    const locks = ref.get(LockService);
    const events: LockEvent[] = [];
    locks.events$.subscribe((event) => events.push(event));
    return { ref, locks, orders: ref.get(Orders), events };
  }

  it("runs each application's @Locked methods through its own LockService, and tells each its own events", async () => {
    const http = await application('http:');
    const worker = await application('worker:');
    expect(await http.orders.ship('1')).toEqual(['http:{order:1}']);
    expect(await worker.orders.ship('2')).toEqual(['worker:{order:2}']);
    expect(http.events.map((event) => event.key)).toEqual(['order:1', 'order:1']);
    expect(worker.events.map((event) => event.key)).toEqual(['order:2', 'order:2']);
  });

  it('closing one leaves the other working: its held lock, its waiter, its @Locked methods, its events', async () => {
    const http = await application('shared:');
    const worker = await application('shared:');
    const held = await worker.locks.acquire('batch');
    const wakes = recordWakes(worker.locks);
    onTestFinished(() => wakes.stop());
    const waiting = worker.locks.acquire('batch', { waitTimeout: '10s' });
    // Waiting: its first attempt found the lock busy.
    await expect.poll(() => wakes.steps.length).toBeGreaterThan(0);
    const httpHeld = await http.locks.acquire('http-only');
    await http.ref.close();
    expect(httpHeld.signal.aborted).toBe(true);
    expect(held.signal.aborted).toBe(false);
    expect(await redis.exists('shared:{batch}')).toBe(1);
    await held.release();
    const next = await waiting;
    expect(next.signal.aborted).toBe(false);
    await next.release();
    expect(await worker.orders.ship('3')).toEqual(['shared:{order:3}']);
    expect(worker.events.filter((event) => event.type === 'acquired').map((event) => event.key)).toEqual(['batch', 'batch', 'order:3']);
    expect(http.events.map((event) => event.key)).not.toContain('order:3');
  });

  it('each with RedisLockMetricsModule on one meter provider: closing one leaves the metrics of the other recorded', async () => {
    const metrics = () => [RedisLockMetricsModule.forRoot({ meterProvider: lockMetrics.provider })];
    const http = await application('http:', metrics());
    const worker = await application('worker:', metrics());
    await (await http.locks.acquire('report', { name: 'report' })).release();
    await http.ref.close();
    const held = await worker.locks.acquire('batch', { name: 'batch' });
    expect(await lockMetrics.value('lock.active', { 'lock.name': 'batch' })).toBe(1);
    await held.release();
    expect(await lockMetrics.value('lock.active', { 'lock.name': 'batch' })).toBe(0);
  });
});
