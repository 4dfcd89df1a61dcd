/**
 * Found by review (thirty-seventh session). A `@Locked` (or job) method handed on unbound as a
 * callback is called by Node with a `this` of its own: `setTimeout(service.tick, ...)` and
 * `setInterval()` call it on their `Timeout`, an `EventEmitter` (`emitter.on('order', service.ship)`,
 * `process.on(...)`) on itself. The call failed saying the instance "has no LockService: the
 * instance must be created by Nest, in a module that imports RedisLockModule ..., not frozen ...,
 * and not called from its constructor", none of which was wrong: the provider was Nest's and
 * healthy, and the remedy (bind the method) was not named. A call with no `this` at all already
 * said "called without its instance; call it as a method or bind it".
 *
 * The bar: "bad input gets a clear error naming the method and the option or argument".
 */
import { EventEmitter } from 'node:events';
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Locked, LockService, RedisLockModule, WithoutOverlapping } from '../../lib/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

@Injectable()
class OrdersService {
  @Locked('s37-order:<0>')
  async ship(id: string): Promise<string> {
    return `shipped ${id}`;
  }

  @WithoutOverlapping()
  async sweep(): Promise<string> {
    return 'swept';
  }
}

describe('a @Locked or job method called with another object as `this` (an unbound callback)', () => {
  const redis = useRedis();
  let service: OrdersService;
  let close: () => Promise<void>;
  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({ imports: [RedisLockModule.forRoot({ redis: redisUrl() })], providers: [OrdersService] })
      .setLogger(new CapturedLogs())
      .compile();
    await moduleRef.init();
    service = moduleRef.get(OrdersService);
    // The provider itself is healthy.
    expect(moduleRef.get(LockService)).toBeInstanceOf(LockService);
    close = () => moduleRef.close();
  });
  afterAll(() => close());

  // How Node calls a callback: an EventEmitter's listener on the emitter, a timer's on its Timeout.
  const emitter = new EventEmitter();
  const timer = setTimeout(() => undefined, 0);
  clearTimeout(timer);
  const callers: [string, object, string][] = [
    ['an event listener', emitter, 'an EventEmitter'],
    ['a timer callback', timer, 'a Timeout'],
  ];

  it.each(callers)('@Locked, called as %s: says it was called on another object and to bind it', async (_, self, shown) => {
    const error = (await (service.ship as (this: unknown, id: string) => Promise<string>).call(self, 'o-1').catch((caught: unknown) => caught)) as Error;
    // Before: '@Locked method OrdersService.ship has no LockService: the instance must be created by Nest, ...'.
    expect(error.message).toBe(
      `@Locked method OrdersService.ship was called on ${shown}, not on an instance of OrdersService: pass it bound (instance.method.bind(instance), or an arrow function), since a timer or an event emitter calls a callback with a this of its own.`,
    );
    expect(await redis.keys('*')).toEqual([]);
  });

  it.each(callers)('@WithoutOverlapping, called as %s: says it was called on another object and to bind it', async (_, self, shown) => {
    const error = (await (service.sweep as (this: unknown) => Promise<string>).call(self).catch((caught: unknown) => caught)) as Error;
    // Before: '@WithoutOverlapping() method OrdersService.sweep has no lock service: the instance must be created by Nest, ...'.
    expect(error.message).toBe(
      `@WithoutOverlapping() method OrdersService.sweep was called on ${shown}, not on an instance of OrdersService: pass it bound (instance.method.bind(instance), or an arrow function), since a timer or an event emitter calls a callback with a this of its own.`,
    );
    expect(await redis.keys('*')).toEqual([]);
  });

  it('still runs when called on its instance', async () => {
    await expect(service.ship('o-2')).resolves.toBe('shipped o-2');
    await expect(service.sweep()).resolves.toBe('swept');
  });
});
