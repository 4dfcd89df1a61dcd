import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { interval, take, toArray, lastValueFrom, type Observable } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { Locked, LockService, RedisLockError, RedisLockModule } from '../../lib/index.js';
import { CapturedLogs, sleep } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

// docs/locks.md, "Return types": an Observable returned through a Promise is held from the call
// until its first subscriber ends; "if the lock is lost or the application shuts down first, it
// ends then ...; a later subscription errors with RedisLockError". When the @Locked call
// re-entered a lock its caller's chain held (a using() of the same key), that handle ends when the
// outer using() releases the lock, normally: no signal aborts, so the returned Observable still
// waits, and a subscription after the release finds the lease not live and errors with
// `lock.signal.reason`, which is `undefined` (the signal never aborted). The subscriber gets
// `undefined` as its error: no class, no message, nothing that says the lock had ended.
describe('an Observable returned through a Promise by a @Locked call that re-entered its caller\'s lock', () => {
  const redis = useRedis();
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await Promise.all(closers.splice(0).map((close) => close()));
  });

  it('subscribed after the outer lock was released, errors with a RedisLockError saying so', async () => {
    @Injectable()
    class Reports {
      @Locked('report:<0>')
      async rows(_id: string): Promise<Observable<number>> {
        return interval(5).pipe(take(3));
      }
    }
    @Module({ imports: [RedisLockModule.forRoot({ redis: redisUrl() })], providers: [Reports] })
    class AppModule {}
    const ref = await Test.createTestingModule({ imports: [AppModule] }).setLogger(new CapturedLogs()).compile();
    await ref.init();
    closers.push(() => ref.close());
    const locks = ref.get(LockService);
    const reports = ref.get(Reports);

    let rows!: Observable<number>;
    await locks.using('report:1', async () => {
      rows = await reports.rows('1'); // re-enters the chain's lock
    });
    // The outer using() released the lock: nothing is held for the stream any more.
    expect(await redis.exists('lock:{report:1}')).toBe(0);

    const outcome = await lastValueFrom(rows.pipe(toArray())).then(
      (values) => ({ values }),
      (error: unknown) => ({ error }),
    );
    // Fails: { error: undefined }
    expect(outcome).toHaveProperty('error');
    expect((outcome as { error: unknown }).error).toBeInstanceOf(RedisLockError);
    expect(((outcome as { error: Error }).error).message).toContain('Reports.rows');
  });

  it('never subscribed: its timer does not outlive app.close() (nothing is logged after close)', async () => {
    @Injectable()
    class Reports {
      @Locked('report:<0>')
      async rows(_id: string): Promise<Observable<number>> {
        return interval(5).pipe(take(3));
      }
    }
    const logs = new CapturedLogs();
    @Module({ imports: [RedisLockModule.forRoot({ redis: redisUrl(), ttl: 400 })], providers: [Reports] })
    class AppModule {}
    const ref = await Test.createTestingModule({ imports: [AppModule] }).setLogger(logs).compile();
    await ref.init();
    const locks = ref.get(LockService);
    let rows!: Observable<number>;
    await locks.using('report:2', async () => {
      rows = await ref.get(Reports).rows('2');
    });
    await ref.close();
    expect(await redis.exists('lock:{report:2}')).toBe(0);
    const linesAtClose = logs.lines.length;
    // Three times the ttl after close: a timer stopped at close has nothing to say.
    await sleep(1_200);
    const afterClose = logs.lines.slice(linesAtClose).map((line) => `${line.level}: ${line.message}`);
    // Fails: ['warn: Reports.rows: the Observable it returned was not subscribed within the lock's ttl (400 ms); lock "report:2" released. ...']
    expect(afterClose).toEqual([]);
    void rows;
  });
});
