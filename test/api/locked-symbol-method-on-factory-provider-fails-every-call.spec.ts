/**
 * Found by review (thirty-ninth session): a `@Locked` method named by a Symbol
 * (`@Locked('k') async [SHIP]() {}`) on a provider made by `useFactory` (or given by `useValue`)
 * failed every call with "has no LockService: the instance must be created by Nest ...", though
 * Nest made it: such an instance gets its `LockService` from the module's startup, which found
 * `@Locked` methods with Nest's `MetadataScanner`, and that lists string names only. (A class
 * provider gets it by Nest's property injection and worked.) Symbol-named methods are now found
 * too, and their calls take the lock.
 */
import { Injectable, Module } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { Locked, RedisLockModule } from '../../lib/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

const SHIP = Symbol('ship');

@Injectable()
class Orders {
  @Locked('symbol-method:order', { ttl: '5s' })
  async [SHIP](): Promise<boolean> {
    return held!();
  }
}

let held: (() => Promise<boolean>) | undefined;

describe('a @Locked method named by a Symbol', () => {
  const redis = useRedis();
  let moduleRef: TestingModule | undefined;
  afterEach(async () => {
    await moduleRef?.close();
    moduleRef = undefined;
  });

  it.each([
    ['a factory', { provide: 'ORDERS', useFactory: () => new Orders() }],
    ['a value', { provide: 'ORDERS', useValue: new Orders() }],
  ])('on a provider made by %s runs under its lock', async (_by, provider) => {
    @Module({ imports: [RedisLockModule.forRoot({ redis: redisUrl() })], providers: [provider] })
    class AppModule {}
    moduleRef = await Test.createTestingModule({ imports: [AppModule] }).setLogger(new CapturedLogs()).compile();
    await moduleRef.init();
    held = async () => (await redis.exists('lock:{symbol-method:order}')) === 1;
    expect(await moduleRef.get<Orders>('ORDERS')[SHIP]().catch((error: Error) => error.message)).toBe(true);
  });
});
