import type { INestApplication } from '@nestjs/common';
import { afterEach, describe, expect, it } from 'vitest';
import { LockService, RedisLockError, RedisLockModule } from '../../lib/index.js';
import { RedisLockBoardModule } from '../../lib/board/index.js';
import { createHttpApp, listenOnLoopback } from '../support/http-app.js';
import { createLockApp, type LockApp } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

/**
 * Found by a defect hunt (s48). A key's fencing counter holding something this library did not
 * write (another application writing under the key prefix: a word at `lock:{k}:fence`) makes
 * acquire() and tryAcquire() reject with a RedisLockError saying so, and inspect() of a lock key
 * holding a hash says the same; but inspect() of that key answered as if all was well, with
 * `fencingToken: NaN` (`null` once serialised), a value its type (`number | undefined`) never
 * has, whatever the lock's holder. inspect() now says what is wrong, as the other calls do.
 */
describe('inspect() of a key whose fencing counter holds data this library did not write', () => {
  const redis = useRedis();
  let app: LockApp | undefined;
  let http: INestApplication | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
    await http?.close();
    http = undefined;
  });

  it.each([
    ['free', async () => {}],
    ['held by a value of another application', () => redis.set('lock:{foreign-counter}', 'theirs', 'PX', 60_000)],
  ])('rejects with a RedisLockError naming the call and the remedy, the lock %s', async (_what, write) => {
    app = await createLockApp({});
    await redis.set('lock:{foreign-counter}:fence', 'abc');
    await write();
    const said = await app.locks.inspect('foreign-counter').then(
      (inspection) => inspection,
      (caught: unknown) => caught,
    );
    expect(said).toBeInstanceOf(RedisLockError);
    expect((said as Error).message).toMatch(/^inspect\("foreign-counter"\): .*holds data this library did not write.*keyPrefix/);
  });

  it('says what tryAcquire() of the free key says', async () => {
    app = await createLockApp({});
    await redis.set('lock:{foreign-counter}:fence', 'abc');
    const tried = await app.locks.tryAcquire('foreign-counter').catch((caught: unknown) => caught);
    const said = await app.locks.inspect('foreign-counter').catch((caught: unknown) => caught);
    for (const error of [tried, said]) expect((error as Error).message).toMatch(/holds data this library did not write/);
  });

  it('is left out of the lock board, which still lists the real locks (as a key of another type is)', async () => {
    http = await createHttpApp({
      imports: [RedisLockModule.forRoot({ redis: redisUrl(), isGlobal: true }), RedisLockBoardModule.register({ allowWithoutGuards: true })],
    });
    const url = `${await listenOnLoopback(http)}/locks`;
    const lock = await http.get(LockService).acquire('invoice:1');
    try {
      await redis.set('lock:{foreign-counter}:fence', 'abc');
      await redis.set('lock:{foreign-counter}', 'theirs', 'PX', 60_000);
      const response = await fetch(`${url}/api/locks?cursor=0`);
      expect(response.status).toBe(200);
      const page = (await response.json()) as { locks: { key: string }[] };
      expect(page.locks.map((each) => each.key)).toEqual(['invoice:1']);
    } finally {
      await lock.release();
    }
  });
});
