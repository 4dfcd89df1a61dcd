import { Injectable } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { interval, lastValueFrom, map, take, type Observable } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { Locked, RedisLockError, RedisLockModule } from '../lib/index.js';
import { CapturedLogs, sleep } from './support/lock-app.js';
import { useOwnRedis } from './support/redis.js';

@Injectable()
class Streams {
  /** Not declared as returning an Observable: the lock is taken at call time (as test/locked-provider.spec.ts `lazy`). */
  @Locked('lazy:<0>', { ttl: 300 })
  single(id: string): any {
    return interval(10).pipe(take(1), map(() => id));
  }

  /** The same, on two keys: a multi-key lock with the same ttl. */
  @Locked(['lazy-a:<0>', 'lazy-b:<0>'], { ttl: 300 })
  pair(id: string): any {
    return interval(10).pipe(take(1), map(() => id));
  }
}

/**
 * Found by review. docs/locks.md: "An undeclared Observable result is held from the call until its first
 * subscriber completes or unsubscribes; if nobody subscribes within the lock's `ttl`, the lock is
 * released with a warning and a later subscription errors." The window comes from
 * `LockManager.leaseOf(lock)` (lock-manager.ts), which answered the module's default ttl for
 * anything but a `HeldLock`: a multi-key lock (a `MultiLock`) taken with `ttl: 300` was kept,
 * renewed, for the module's 30 s.
 */
describe("an undeclared Observable of a multi-key @Locked method, nobody subscribing within the lock's ttl", () => {
  const own = useOwnRedis();
  let moduleRef: TestingModule | undefined;
  afterEach(async () => {
    await moduleRef?.close();
    moduleRef = undefined;
  });

  it('is released after the lock ttl (300 ms), as the same method on one key is', async () => {
    const logs = new CapturedLogs();
    moduleRef = await Test.createTestingModule({ imports: [RedisLockModule.forRoot({ redis: own.url(), ttl: 30_000 })], providers: [Streams] })
      .setLogger(logs)
      .compile();
    await moduleRef.init();
    const streams = moduleRef.get(Streams);
    const redis = own.redis();

    // One key: released after its 300 ms ttl (the behaviour test/locked-provider.spec.ts checks).
    const one = (await streams.single('n')) as Observable<string>;
    expect(await redis.exists('lock:{lazy:n}')).toBe(1);
    await sleep(1_000);
    expect(await redis.exists('lock:{lazy:n}')).toBe(0);

    // Two keys, the same ttl: still held well past it.
    const two = (await streams.pair('n')) as Observable<string>;
    expect(await redis.exists('lock:{lazy-a:n}', 'lock:{lazy-b:n}')).toBe(2);
    await sleep(1_000);
    expect(await redis.exists('lock:{lazy-a:n}', 'lock:{lazy-b:n}')).toBe(0);
    const late = await lastValueFrom(two).catch((error: unknown) => error);
    expect(late).toBeInstanceOf(RedisLockError);
    await lastValueFrom(one).catch(() => undefined);
  });
});
