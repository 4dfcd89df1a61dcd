/**
 * Found by review (thirty-fifth session). Nest runs the whole shutdown sequence again when
 * `app.close()` is called once an earlier close has settled (a test's afterEach after the test's
 * own close, a signal handler after an explicit close). The jobs' phase runs once
 * (`JobLockOrchestrator.onModuleDestroy` keeps its first promise), but each election's `stop()`
 * ran again: with an `onLeadershipAcquired` that ignores its signal and never returns, the second
 * close waited a whole `shutdownTimeout` for it again, and warned again that the hooks were still
 * running "after its leadership's signal aborted for shutdown", of a leadership given back by
 * the first close.
 */
import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { LeaderElection, LeadershipService, RedisLockModule } from '../../lib/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

describe('app.close() called again after a close that waited for a hung leader hook', () => {
  const redis = useRedis();

  it('does not wait for the hook, nor warn about it, a second time', async () => {
    @Injectable()
    @LeaderElection('close-again-hung', { ttl: '4s' })
    class HungLeader {
      onLeadershipAcquired(): Promise<void> {
        return new Promise<void>(() => undefined); // ignores its signal, never settles
      }
    }
    @Module({ imports: [RedisLockModule.forRoot({ redis: redisUrl(), shutdownTimeout: 500 })], providers: [HungLeader] })
    class AppModule {}
    const logs = new CapturedLogs();
    const app = await Test.createTestingModule({ imports: [AppModule] }).setLogger(logs).compile();
    await app.init();
    await expect.poll(() => app.get(LeadershipService).isLeader('close-again-hung'), { timeout: 5_000 }).toBe(true);

    const stillRunning = (): number => logs.lines.filter((line) => line.level === 'warn' && line.message.includes('were still running')).length;
    await app.close();
    expect(stillRunning()).toBe(1);
    expect(await redis.exists('lock:{close-again-hung}')).toBe(0);

    await app.close();
    // Failed: 2, the second close having waited shutdownTimeout for the hook again.
    expect(stillRunning()).toBe(1);
  }, 20_000);
});
