/**
 * Suspected by review (forty-third session). An Observable a `@Locked` method returned through a
 * Promise is held until subscribed (`holdWhileSubscribed`, lib/core/engine/locked-call.ts),
 * listening on the lock's signal and on the application's closing. When the call re-entered a
 * lock its caller's chain held, that signal is the outer lock's, which its normal release does
 * not abort: the close then ends the wait, and took its listener off the closing signal but left
 * the one on the outer lock's, keeping the call's closure (its method's stream and what that
 * captured) alive for as long as the outer lock object is kept.
 */
import 'reflect-metadata';
import { getEventListeners } from 'node:events';
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { of, type Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { Locked, LockService, RedisLockModule, type Lock } from '../../lib/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

@Injectable()
class Reports {
  /** Returned through a Promise: the lock is taken at call time and held until a subscriber ends it. */
  @Locked('report:<0>')
  async rows(id: string): Promise<Observable<string>> {
    return of(id);
  }
}

describe('an unsubscribed Observable of a @Locked call that re-entered its caller\'s lock, ended by app.close()', () => {
  const redis = useRedis();

  it('leaves no listener on the outer lock\'s signal', async () => {
    const ref = await Test.createTestingModule({ imports: [RedisLockModule.forRoot({ redis: redisUrl() })], providers: [Reports] })
      .setLogger(new CapturedLogs())
      .compile();
    await ref.init();
    let outer!: Lock;
    let rows!: Observable<string>;
    let before = 0;
    try {
      await ref.get(LockService).using('report:1', async (lock) => {
        outer = lock;
        before = getEventListeners(lock.signal, 'abort').length;
        // Re-enters the chain's lock: its handle's signal is the outer lock's.
        rows = await ref.get(Reports).rows('1');
      });
      // Released normally: the outer signal did not abort, and the stream still waits on it.
      expect(outer.signal.aborted).toBe(false);
      expect(await redis.exists('lock:{report:1}')).toBe(0);
      expect(getEventListeners(outer.signal, 'abort').length).toBe(before + 1);
    } finally {
      await ref.close();
    }
    // The close ended the wait. Before: before + 1, the wait's listener kept.
    expect(getEventListeners(outer.signal, 'abort').length).toBe(before);
    void rows;
  });
});
