/**
 * Defect: a `@Locked` placeholder with a property path (`<0.id>`) whose argument is a string,
 * number or boolean fails with a `LockKeyError` that says the *argument* is `undefined`: the
 * caller passed `'order-42'` and is told "argument 0 is undefined".
 *
 * Promise: docs/locks.md "Checked early": a placeholder that cannot be filled "fails the call
 * with LockKeyError naming the method and the placeholder"; the message of `fill()` reports what
 * the path reached (`argument 0.id is undefined` for an object without `id`, `argument 0 is null`
 * for a null argument), so that the caller can see what was wrong.
 *
 * What happens: lib/core/keys/key-template.ts, `fill()`: on a primitive it sets
 * `value = undefined` and breaks *before* appending the property to `reached`, so the message
 * blames the argument itself (`argument 0 is undefined`) instead of the property
 * (`argument 0.id is undefined`) or the argument's real type (a string). A common mistake
 * (passing the id where the template expects the entity, `'order:<0.id>'` called with
 * `order.id`) is reported as a missing argument.
 */
import { Injectable, Module } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { LockKeyError, Locked, RedisLockModule } from '../../lib/index.js';
import { redisUrl, useRedis } from '../support/redis.js';

@Injectable()
class Orders {
  @Locked('order:<0.id>')
  async ship(_order: { id: string }): Promise<string> {
    return 'shipped';
  }
}

describe('a property path into a primitive argument', () => {
  useRedis();
  let moduleRef: TestingModule | undefined;
  afterEach(() => moduleRef?.close());

  it('is refused without claiming the argument is undefined', async () => {
    @Module({ imports: [RedisLockModule.forRoot({ redis: redisUrl() })], providers: [Orders] })
    class AppModule {}
    moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    await moduleRef.init();
    const error = await moduleRef
      .get(Orders)
      .ship('order-42' as never)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockKeyError);
    expect((error as Error).message).toContain('Orders.ship');
    expect((error as Error).message).toContain('<0.id>');
    // Argument 0 was given: a string. Whatever the message says, it must not say it is undefined.
    expect((error as Error).message).not.toMatch(/argument 0 is undefined/);
  });
});
