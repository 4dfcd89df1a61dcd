import { Test, type TestingModule } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { FencedRedis, LockService, RedisLockModule } from '../../lib/index.js';
import { InMemoryLocks, RedisLockTestingModule } from '../../lib/testing/index.js';
import { redisUrl, useRedis } from '../support/redis.js';

/**
 * Found by review (thirty-third session, fencing): a data key that is a lock's own name under the
 * module's `keyPrefix` (`shop:{account-7}` with `keyPrefix: 'shop:'`, lock `account-7`) is refused
 * by the module's FencedRedis on Redis, before anything is written (a write there would replace
 * the lock: test/fencing/fenced-data-key-is-a-lock-key.spec.ts). The testing module's FencedRedis,
 * the one unit tests run against, wrote it: code whose tests passed failed every such write once
 * deployed. Both now refuse it alike, for a write and a read for update; and for a plain read,
 * which on Redis answered what the lock keeps there, its holder's owner token, and in memory null
 * (test/fencing/plain-read-of-lock-key-hands-out-owner-token.spec.ts).
 */
describe("a fenced data key that is a lock's own name (<keyPrefix>{<key>}), on Redis and in memory alike", () => {
  useRedis();

  const calls = (fenced: FencedRedis, token: number) => ({
    set: () => fenced.set('shop:{account-7}', '100', token),
    hset: () => fenced.hset('shop:{account-7}', 'balance', 100, token),
    get: () => fenced.get('shop:{account-7}', token),
    hget: () => fenced.hget('shop:{account-7}:holders', 'x', token),
  });

  async function outcomes(moduleRef: TestingModule): Promise<Record<string, string>> {
    const lock = await moduleRef.get(LockService).acquire('account-7');
    try {
      const result: Record<string, string> = {};
      for (const [name, call] of Object.entries(calls(moduleRef.get(FencedRedis), lock.fencingToken))) {
        result[name] = await call().then(
          () => 'done',
          (error: unknown) => `${(error as Error).name}: ${(error as Error).message.split(' ').slice(0, 3).join(' ')}`,
        );
      }
      result.plainRead = await moduleRef
        .get(FencedRedis)
        .get('shop:{data}')
        .then(
          (value) => `read ${value}`,
          (error: unknown) => `${(error as Error).name}: ${(error as Error).message.split(' ').slice(0, 3).join(' ')}`,
        );
      return result;
    } finally {
      await lock.release();
    }
  }

  it('is refused by the testing module as by the module on Redis, naming the method', async () => {
    const onRedis = await Test.createTestingModule({ imports: [RedisLockModule.forRoot({ redis: redisUrl(), keyPrefix: 'shop:' })] }).compile();
    await onRedis.init();
    const inMemory = await Test.createTestingModule({ imports: [RedisLockTestingModule.forRoot({ keyPrefix: 'shop:' })] }).compile();
    await inMemory.init();
    try {
      const expected = {
        set: 'TypeError: FencedRedis.set(): Argument "key"',
        hset: 'TypeError: FencedRedis.hset(): Argument "key"',
        get: 'TypeError: FencedRedis.get(): Argument "key"',
        hget: 'TypeError: FencedRedis.hget(): Argument "key"',
        plainRead: 'TypeError: FencedRedis.get(): Argument "key"',
      };
      expect(await outcomes(onRedis)).toEqual(expected);
      expect(await outcomes(inMemory)).toEqual(expected);
    } finally {
      await Promise.all([onRedis.close(), inMemory.close()]);
    }
  });

  it('in memory, under the keyPrefix of the modules running on the store: refused while one runs, written once all closed', async () => {
    const store = new InMemoryLocks();
    const open = async () => {
      const moduleRef = await Test.createTestingModule({ imports: [RedisLockTestingModule.forRoot({ locks: store, keyPrefix: 'shop:' })] }).compile();
      return moduleRef.init();
    };
    const fenced = new FencedRedis(store);
    const write = () => fenced.set('shop:{account-7}', '100', 5).then(() => 'written', (error: unknown) => (error as Error).name);
    const [first, second] = [await open(), await open()];
    expect(await write()).toBe('TypeError');
    await first.close();
    expect(await write()).toBe('TypeError');
    await second.close();
    expect(await write()).toBe('written');
    expect(await new FencedRedis(new InMemoryLocks()).set('shop:{account-7}', '100', 5)).toBeUndefined(); // a store no module runs on
  });
});
