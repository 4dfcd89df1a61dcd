/**
 * Defect: inside a call that re-entered a key its chain already holds (a nested `using(key)` or
 * `@Locked` method), `current()` returns the lock of a *different* key, the innermost one the
 * chain took in between, with that key's fencing token and signal.
 *
 * Promise: `LockService.using()` TSDoc: "Inside `fn`, `current()` returns the lock"; docs/locks.md
 * "`@Locked`... Inside. `lockService.current()` returns the lock (its `signal`, `fencingToken`)";
 * `current()` TSDoc example: `@Locked('order:<0>') ship() { const { signal, fencingToken } =
 * this.locks.current()!; await carrier.book(orderId, { signal, fencingToken }); }`.
 *
 * What happens: a re-entered acquisition hands out a `ReentrantLock`, and neither `using()`
 * (lib/core/engine/lock-manager.ts, `using`: `if (!(lock instanceof HeldLock) && !(lock instanceof
 * MultiLock)) return await fn(lock)`) nor `runInChain()` (same file, `if (!(lock instanceof
 * HeldLock)) return fn();`, the path every `@Locked` call takes) puts anything on the chain. So
 * in `order:1 -> account:7 -> order:1` the innermost call's `current()` is the `account:7` lock:
 * code that passes `current().fencingToken` to the order store writes with the account's token
 * (refused, or worse accepted against another counter), and listens to the wrong key's signal.
 */
import { Injectable, Module } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { LockService, Locked, RedisLockModule } from '../../lib/index.js';
import { createLockApp, type LockApp } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

@Injectable()
class Shipping {
  constructor(readonly locks: LockService) {}

  @Locked('order:<0>')
  async ship(_orderId: string): Promise<{ key?: string; fencingToken?: number }> {
    const lock = this.locks.current();
    return { key: lock?.key, fencingToken: lock?.fencingToken };
  }

  @Locked('account:<0>')
  async charge(_accountId: string, orderId: string): Promise<{ key?: string; fencingToken?: number }> {
    // Calls back into a method of the order the chain already holds.
    return this.ship(orderId);
  }

  @Locked('order:<0>')
  async pay(orderId: string, accountId: string): Promise<{ key?: string; fencingToken?: number }> {
    return this.charge(accountId, orderId);
  }
}

describe('current() inside a call that re-entered a key the chain holds', () => {
  const redis = useRedis();
  let app: LockApp | undefined;
  let moduleRef: TestingModule | undefined;
  afterEach(async () => {
    await app?.close();
    await moduleRef?.close();
    app = moduleRef = undefined;
  });

  it('using(): is the lock of the re-entered key, not of the key taken in between', async () => {
    app = await createLockApp();
    const locks = app.locks;
    // Give the two keys different fencing tokens, so that mixing them up shows: a new key's
    // counter starts at the server's clock in ms, so two keys seeded a few ms apart may meet.
    await redis.set('lock:{account:7}:fence', '10');
    for (let i = 0; i < 3; i++) await (await locks.acquire('account:7')).release();
    const seen = await locks.using('order:1', async (order) =>
      locks.using('account:7', async () =>
        locks.using('order:1', async (inner) => {
          const current = locks.current();
          return { order: order.fencingToken, inner: inner.key, key: current?.key, fencingToken: current?.fencingToken, signal: current?.signal === order.signal };
        }),
      ),
    );
    expect(seen.inner).toBe('order:1');
    expect(seen.key).toBe('order:1');
    expect(seen.fencingToken).toBe(seen.order);
    expect(seen.signal).toBe(true);
    expect(await redis.exists('lock:{order:1}', 'lock:{account:7}')).toBe(0);
  });

  it('@Locked: the re-entered method sees its own key and token', async () => {
    @Module({ imports: [RedisLockModule.forRoot({ redis: redisUrl() })], providers: [Shipping] })
    class AppModule {}
    moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    await moduleRef.init();
    const locks = moduleRef.get(LockService);
    // As above: account:7's tokens far from order:1's, which starts at the server's clock.
    await redis.set('lock:{account:7}:fence', '10');
    for (let i = 0; i < 3; i++) await (await locks.acquire('account:7')).release();
    const seen = await moduleRef.get(Shipping).pay('1', '7');
    // order:1's own token (its counter's only one), not account:7's.
    const [orderToken, accountToken] = await redis.mget('lock:{order:1}:fence', 'lock:{account:7}:fence');
    expect(seen).toEqual({ key: 'order:1', fencingToken: Number(orderToken) });
    expect(seen.fencingToken).not.toBe(Number(accountToken));
  });
});
