/**
 * Found by review: a `@Locked` generator method (`async *rows()`, `*ids()`) ran its body without
 * the lock. Calling it returns the generator at once (a "value"), so the wrapper released the
 * lock in the same breath and resolved a Promise of the generator: every statement of the body
 * then ran with the lock given back in Redis, `current()` undefined, another caller free to take
 * the key. Nothing warned. docs/locks.md: a method "holds the lock until it settles", and inside
 * it `current()` returns the lock. A generator method is now refused when the class is defined,
 * and a generator returned by an ordinary method is refused at the call (its body never runs),
 * naming the method; the lock is given back.
 */
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { LockService, Locked, RedisLockError, RedisLockModule } from '../../lib/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

describe('@Locked and generators', () => {
  const redis = useRedis();
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
  });

  it('refuses an async or a synchronous generator method when the class is defined, naming it', () => {
    const asyncGenerator = () => {
      class FeedService {
        @Locked('feed:<0>')
        async *rows(_id: string): AsyncGenerator<number> {
          yield 1;
        }
      }
      return FeedService;
    };
    const syncGenerator = () => {
      class IdService {
        @Locked('ids:<0>')
        *ids(_id: string): Generator<number> {
          yield 1;
        }
      }
      return IdService;
    };
    expect(asyncGenerator).toThrow(RedisLockError);
    expect(asyncGenerator).toThrow(/@Locked on FeedService\.rows: a generator method runs its body as it is iterated/);
    expect(syncGenerator).toThrow(/@Locked on IdService\.ids: a generator method/);
  });

  it('refuses a generator returned by an ordinary method, before its body runs, and gives the lock back', async () => {
    let bodyRan = false;
    @Injectable()
    class FeedService {
      constructor(readonly locks: LockService) {}
      @Locked('feed:<0>')
      rows(_id: string): unknown {
        return (async function* () {
          bodyRan = true;
          yield 1;
        })();
      }
    }
    const moduleRef = await Test.createTestingModule({ imports: [RedisLockModule.forRoot({ redis: redisUrl() })], providers: [FeedService] })
      .setLogger(new CapturedLogs())
      .compile();
    await moduleRef.init();
    close = () => moduleRef.close();
    const error = await (moduleRef.get(FeedService).rows('42') as Promise<unknown>).then(
      () => undefined,
      (failed: unknown) => failed,
    );
    expect(error).toBeInstanceOf(RedisLockError);
    expect((error as Error).message).toMatch(/@Locked on FeedService\.rows: the method returned a generator/);
    expect(bodyRan).toBe(false);
    expect(await redis.exists('lock:{feed:42}')).toBe(0);
  });
});
