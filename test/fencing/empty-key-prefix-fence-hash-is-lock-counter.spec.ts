import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError, RedisLockModule } from '../../lib/index.js';
import { RedisLockTestingModule } from '../../lib/testing/index.js';
import { redisUrl, useRedis } from '../support/redis.js';

/**
 * Review (fencing): with `keyPrefix: ''` a lock on key K kept its fencing counter (a string,
 * INCR) at `{K}:fence` (`P{K}:fence`, docs/redis-data.md), the very name of the hash in which
 * `FencedRedis` keeps the tokens of the data keys of tag K (`balance:{K}`, or the untagged key K;
 * docs/fencing.md). The documented pattern "write one resource under one lock key" then failed
 * with a raw WRONGTYPE on every write; and once a fenced write made the hash (the docs' wallet
 * example: data `wallet:{7}`, tokens in `{7}:fence`), a lock on key 7 could never be taken again.
 * In memory the two were apart, so unit tests passed. A prefix that is not empty keeps every lock
 * key from starting with `{`, where every token hash starts: the module refuses an empty one.
 */
describe("keyPrefix ''", () => {
  useRedis();

  it.each([
    ['RedisLockModule.forRoot()', () => RedisLockModule.forRoot({ redis: redisUrl(), keyPrefix: '' })],
    ['RedisLockTestingModule.forRoot()', () => RedisLockTestingModule.forRoot({ keyPrefix: '' })],
  ] as const)('is refused by %s, naming keyPrefix and why', async (where, module) => {
    const error = await Test.createTestingModule({ imports: [module()] })
      .compile()
      .then((moduleRef) => moduleRef.close(), (caught: unknown) => caught);
    expect(error).toBeInstanceOf(InvalidLockOptionsError);
    expect((error as InvalidLockOptionsError).option).toBe('keyPrefix');
    expect((error as Error).message).toContain(where);
    expect((error as Error).message).toContain('FencedRedis');
  });
});
