/**
 * What a job call does when it cannot ask Redis (frozen here by SIGSTOP; down, or cut off by a
 * network that resets nothing, look the same to it), as docs/jobs-and-leaders.md says: it rejects
 * with a `RedisLockError` without running, so that `@nestjs/schedule` logs the tick as failed.
 * It is no skip (no `skipped` event, no debug line): a skip says the job ran, or runs, elsewhere,
 * and with Redis gone nothing knows that. And the call ends while Redis stays frozen: the tick
 * is not held up for as long as Redis is gone.
 */
import { Injectable } from '@nestjs/common';
import { afterEach, describe, expect, it } from 'vitest';
import { LockService, OnOneInstance, RedisLockError, WithoutOverlapping, type LockEvent } from '../../lib/index.js';
import { useOwnRedis } from '../support/redis.js';
import { startJobApp } from './support.js';

describe('a job call with Redis frozen', () => {
  const own = useOwnRedis();
  afterEach(() => own.server().resume());

  @Injectable()
  class Jobs {
    runs = 0;
    @WithoutOverlapping()
    async count(): Promise<void> {
      this.runs++;
    }
    @OnOneInstance()
    async report(): Promise<void> {
      this.runs++;
    }
  }

  it.each(['count', 'report'] as const)('%s(): rejects with a RedisLockError, runs nothing and skips nothing', async (method) => {
    const app = await startJobApp([Jobs], { redis: own.url() });
    const jobs = app.get(Jobs);
    const events: LockEvent[] = [];
    app.get<LockService>(LockService).events$.subscribe((event) => events.push(event));
    own.server().pause();
    const outcome = await jobs[method]().then(
      () => 'resolved',
      (error: unknown) => error,
    );
    expect(outcome).toBeInstanceOf(RedisLockError);
    expect(jobs.runs).toBe(0);
    expect(events.filter((event) => event.type === 'skipped')).toEqual([]);
    own.server().resume();
    // Redis back: the next tick runs.
    await jobs[method]();
    expect(jobs.runs).toBe(1);
  }, 30_000);
});
