/**
 * Found by review (forty-first session): two `RedisLockModule.forRoot()` in one application (a
 * global one and a feature module's own, allowed without jobs or elections), a `@Locked` method of
 * one calling into a method locked through the other on the same key. Re-entry is per
 * `LockService` (its call chain): the inner call does not re-enter. On one Redis with one key
 * prefix both name the same Redis key, so the inner call waits for the lock its own caller holds,
 * until its `waitTimeout` (for ever with `Infinity`; `onBusy: 'skip'` skips it without a word). With
 * two prefixes they are two locks, which exclude nobody else's calls of the other module. Not
 * fixable in the engine without knowing that two modules share one Redis; docs/locks.md says so.
 */
import { Injectable, Module } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { LockNotAcquiredError, Locked, RedisLockModule } from '../../lib/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

describe('a @Locked call into a method locked through another RedisLockModule, on the same key', () => {
  const redis = useRedis();
  const open: TestingModule[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((ref) => ref.close()));
  });

  @Injectable()
  class Billing {
    @Locked('order:<0>', { waitTimeout: 300 })
    async charge(id: string): Promise<string[]> {
      return (await redis.keys(`*{order:${id}}`)).sort();
    }
  }

  async function start(featurePrefix: string): Promise<{ outer: (id: string) => Promise<string[]> }> {
    @Injectable()
    class Orders {
      constructor(private readonly billing: Billing) {}
      @Locked('order:<0>')
      async place(id: string): Promise<string[]> {
        return this.billing.charge(id);
      }
    }
    @Module({ providers: [Billing], exports: [Billing] })
    class BillingModule {}
    @Module({ imports: [RedisLockModule.forRoot({ redis: redisUrl(), keyPrefix: featurePrefix }), BillingModule], providers: [Orders] })
    class OrdersModule {}
    const ref = await Test.createTestingModule({ imports: [RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true }), OrdersModule] })
      .setLogger(new CapturedLogs())
      .compile();
    await ref.init();
    open.push(ref);
    const orders = ref.select(OrdersModule).get(Orders);
    return { outer: (id) => orders.place(id) };
  }

  it('waits for its own caller until its waitTimeout when both modules have one prefix', async () => {
    const app = await start('lock:');
    // No re-entry across modules: the caller's lock is another holder's to the inner call.
    await expect(app.outer('1')).rejects.toBeInstanceOf(LockNotAcquiredError);
    await expect.poll(() => redis.exists('lock:{order:1}')).toBe(0);
  });

  it('takes a lock of its own, beside its caller\'s, when the prefixes differ', async () => {
    const app = await start('feature:');
    expect(await app.outer('2')).toEqual(['feature:{order:2}', 'lock:{order:2}']);
  });
});
