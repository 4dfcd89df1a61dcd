/**
 * Found by review (twenty-ninth session): an error thrown by `onLeadershipAcquired` (or `onLeadershipLost`) is logged with its
 * message only: `onLeadershipAcquired of Feed threw (Cannot read properties of undefined (reading
 * 'connect')); stepping down.` Its stack is dropped, so nothing says where in the hook it was
 * thrown, and the instance steps down and tries again every ttl / 3, logging the same line each
 * time. A job's error reaches @nestjs/schedule, which logs it with its stack; Nest's Logger takes
 * the stack as `error(message, stack)`. lib/scheduling/leader-election.runner.ts, `acquired()` and
 * `callLost()` (`this.runner.logger.error(\`... threw (${message}) ...\`)`), and LockLogger.error
 * takes a message only (lib/core/engine/lock-logger.ts).
 */
import { Injectable, Module, type LoggerService } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { LeaderElection, RedisLockModule, type OnLeadershipAcquired, type OnLeadershipLost } from '../../lib/index.js';
import { redisUrl, useRedis } from '../support/redis.js';

class AllArgsLogger implements LoggerService {
  readonly errors: unknown[][] = [];
  log(): void {}
  warn(): void {}
  debug(): void {}
  verbose(): void {}
  error(...args: unknown[]): void {
    this.errors.push(args);
  }
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

describe('a leader hook that throws', () => {
  useRedis();

  it('is logged with where it threw (its stack)', async () => {
    @LeaderElection('hook-stack', { ttl: '60s' })
    @Injectable()
    class Feed implements OnLeadershipAcquired {
      private socket?: { connect(): void };
      onLeadershipAcquired(): void {
        openTheFeedSocket(this.socket);
      }
    }
    function openTheFeedSocket(socket: { connect(): void } | undefined): void {
      socket!.connect();
    }
    @Module({ imports: [RedisLockModule.forRoot({ redis: redisUrl() })], providers: [Feed] })
    class AppModule {}
    const logger = new AllArgsLogger();
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).setLogger(logger).compile();
    await moduleRef.init();
    closers.push(() => moduleRef.close());
    await expect.poll(() => logger.errors.length).toBeGreaterThan(0);
    const logged = logger.errors[0]!.map(String).join('\n');
    expect(logged).toContain('onLeadershipAcquired of Feed threw');
    // Was: only the message was logged; the frame of openTheFeedSocket was nowhere.
    expect(logged).toContain('openTheFeedSocket');
  });

  it('is logged with its stack from onLeadershipLost too', async () => {
    let leading = false;
    @LeaderElection('hook-stack-lost', { ttl: '60s' })
    @Injectable()
    class Feed implements OnLeadershipAcquired, OnLeadershipLost {
      private socket?: { close(): void };
      onLeadershipAcquired(): void {
        leading = true;
      }
      onLeadershipLost(): void {
        closeTheFeedSocket(this.socket);
      }
    }
    function closeTheFeedSocket(socket: { close(): void } | undefined): void {
      socket!.close();
    }
    @Module({ imports: [RedisLockModule.forRoot({ redis: redisUrl() })], providers: [Feed] })
    class AppModule {}
    const logger = new AllArgsLogger();
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).setLogger(logger).compile();
    await moduleRef.init();
    await expect.poll(() => leading).toBe(true);
    // Stepping down at shutdown runs onLeadershipLost.
    await moduleRef.close();
    const logged = logger.errors.map((args) => args.map(String).join('\n')).find((line) => line.includes('onLeadershipLost of Feed threw'));
    expect(logged).toContain('closeTheFeedSocket');
  });
});
