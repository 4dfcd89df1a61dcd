import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { LockService, Locked, RedisLockModule } from '../../lib/index.js';
import { InMemoryLocks, RedisLockTestingModule } from '../../lib/testing/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { useOwnRedis } from '../support/redis.js';

/**
 * The recipe of a team whose application module imports `RedisLockModule.forRoot({ redis })`:
 * its tests swap that import for the testing module with `overrideModule()`. The `@Locked`
 * methods then run on the in-memory store, and the URL given to `forRoot()` is never connected to.
 */
describe('RedisLockModule.forRoot() of the application overridden by RedisLockTestingModule', () => {
  // A server of the file's own: its count of connections received is this test's alone.
  const own = useOwnRedis();
  @Injectable()
  class Orders {
    constructor(readonly locks: LockService) {}
    @Locked('order:<0>')
    async pay(id: string): Promise<boolean> {
      return (await this.locks.inspect(`order:${id}`)).held;
    }
  }

  it.each([
    ['forRoot()', () => RedisLockModule.forRoot({ redis: own.url(), isGlobal: true })],
    ['forRootAsync()', () => RedisLockModule.forRootAsync({ isGlobal: true, useFactory: () => ({ redis: own.url() }) })],
  ])('@Locked methods lock in memory, and no connection is opened to the URL of %s', async (_, real) => {
    const watcher = own.redis();
    const locksModule = real();
    @Module({ providers: [Orders], exports: [Orders] })
    class OrdersModule {}
    @Module({ imports: [locksModule, OrdersModule] })
    class AppModule {}
    const connectionsBefore = await connectionsReceived(watcher);
    const store = new InMemoryLocks();
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] })
      .overrideModule(locksModule)
      .useModule(RedisLockTestingModule.forRoot({ locks: store, isGlobal: true }))
      .setLogger(new CapturedLogs())
      .compile();
    await moduleRef.init();
    const orders = moduleRef.get(Orders);
    expect(await orders.pay('1')).toBe(true);
    const held = await orders.locks.acquire('order:2');
    // The store the test handed in has it: another module on that store finds it busy.
    const other = await Test.createTestingModule({ imports: [RedisLockTestingModule.forRoot({ locks: store })] }).compile();
    await other.init();
    expect(await other.get(LockService).tryAcquire('order:2')).toBeNull();
    await held.release();
    await other.close();
    await moduleRef.close();
    expect(await connectionsReceived(watcher)).toBe(connectionsBefore);
  });
});

/** Connections the server accepted so far (`INFO stats`). */
async function connectionsReceived(redis: Redis): Promise<number> {
  const stats = await redis.info('stats');
  return Number(/total_connections_received:(\d+)/.exec(stats)![1]);
}
