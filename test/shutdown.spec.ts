import { Inject, Injectable, Module, type OnApplicationShutdown } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { LockService, RedisLockError, RedisLockModule, type Lock } from '../lib/index.js';
import { blockRedis } from './support/block-redis.js';
import { watchCommands } from './support/monitor.js';
import { CapturedLogs, createLockApp, sleep } from './support/lock-app.js';
import { useOwnRedis } from './support/redis.js';

const REDIS = Symbol('REDIS');

/** Every test here blocks Redis or closes with work in flight: a server of the file's own. */
let redisUrl: () => string;

/** The application's own Redis module: it closes its client when the application shuts down. */
@Injectable()
class RedisCloser implements OnApplicationShutdown {
  constructor(@Inject(REDIS) private readonly client: Redis) {}
  async onApplicationShutdown(): Promise<void> {
    await this.client.quit();
  }
}

@Module({
  providers: [{ provide: REDIS, useFactory: () => new Redis(redisUrl()) }],
  exports: [REDIS],
})
class AppRedisModule {}

describe('shutdown', () => {
  const own = useOwnRedis();
  redisUrl = own.url;

  it('gives back a lock whose acquire was in flight when close() began (connection we opened)', async () => {
    const app = await createLockApp({ redis: redisUrl(), ttl: 30_000 });
    await app.locks.isLocked('warm-up'); // connected, scripts loaded
    const { ended } = await blockRedis(redisUrl(), 300);
    const acquiring = app.locks.acquire('k', { waitTimeout: 0 }).catch((e: unknown) => e);
    await sleep(5);
    await app.close();
    await ended;
    expect(await acquiring).toBeInstanceOf(RedisLockError);
    expect(await own.redis().exists('lock:{k}')).toBe(0);
  });

  it('gives back a lock whose acquire was in flight when close() began (client handed in)', async () => {
    const client = new Redis(redisUrl());
    try {
      const app = await createLockApp({ redis: client, ttl: 30_000 });
      await app.locks.isLocked('warm-up');
      const { ended } = await blockRedis(redisUrl(), 300);
      const trying = app.locks.tryAcquire('t').catch((e: unknown) => e);
      const acquiring = app.locks.acquire('k', { waitTimeout: 0 }).catch((e: unknown) => e);
      await sleep(5);
      await app.close();
      await ended;
      expect(await acquiring).toBeInstanceOf(RedisLockError);
      expect(await trying).toBeInstanceOf(RedisLockError);
      // Whatever the client still had to send has been answered by now.
      expect(await client.exists('lock:{k}', 'lock:{t}')).toBe(0);
    } finally {
      client.disconnect();
    }
  });

  it.each<[string, (locks: LockService) => Promise<unknown>]>([
    ['tryAcquire()', (locks) => locks.tryAcquire('k')],
    ['acquire() with waitTimeout: 0', (locks) => locks.acquire('k', { waitTimeout: 0 })],
  ])('%s gives back a lock whose reply was lost to an error after the script ran', async (_call, attempt) => {
    const client = new Redis(redisUrl());
    const app = await createLockApp({ redis: client, ttl: 30_000 });
    try {
      // The same call once while Redis answers, which loads its scripts: else the attempt below
      // would be answered NOSCRIPT once Redis resumes, after its client gave up (no script run).
      await ((await attempt(app.locks)) as Lock).release();
      // The attempt alone gets a 100 ms command timeout (a warm-up under it timed out on a loaded
      // machine), against a Redis frozen until it timed out: its script waits in the socket and
      // runs once Redis resumes, after the client gave up on the reply (a 400 ms block raced a
      // late timer instead).
      client.options.commandTimeout = 100;
      const commands = await watchCommands('lock:{k}', own.url());
      own.server().pause();
      let error: unknown;
      try {
        error = await attempt(app.locks).catch((e: unknown) => e);
      } finally {
        own.server().resume();
      }
      expect((error as Error).message).toMatch(/timed out/i);
      // The script ran (MONITOR lists it once run; its script loaded); the lock must not stay for its ttl.
      await expect.poll(() => commands.seen.length).toBeGreaterThan(0);
      await commands.stop();
      await expect.poll(() => own.redis().exists('lock:{k}')).toBe(0);
    } finally {
      await app.close();
      client.disconnect();
    }
  });

  it("releases locks before the application's own modules close the client they handed in", async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        AppRedisModule,
        RedisLockModule.forRootAsync({ imports: [AppRedisModule], inject: [REDIS], useFactory: (client: Redis) => ({ redis: client, ttl: 30_000 }) }),
      ],
      // A provider of the root module closes the client, as an application's own code would.
      providers: [RedisCloser],
    })
      .setLogger(new CapturedLogs())
      .compile();
    await moduleRef.init();
    const locks = moduleRef.get(LockService);
    const lock = await locks.acquire('k');
    expect(await own.redis().exists('lock:{k}')).toBe(1);
    await moduleRef.close();
    expect(lock.signal.aborted).toBe(true);
    expect(await own.redis().exists('lock:{k}')).toBe(0);
  });

  it('completes events$ at shutdown', async () => {
    const app = await createLockApp({ redis: redisUrl() });
    let completed = false;
    app.locks.events$.subscribe({ complete: () => (completed = true) });
    await app.close();
    expect(completed).toBe(true);
  });

  it('keeps to shutdownTimeout with an acquire stuck in a blocked Redis', async () => {
    const app = await createLockApp({ redis: redisUrl(), shutdownTimeout: 200 });
    await app.locks.isLocked('warm-up');
    const { ended } = await blockRedis(redisUrl(), 1_500);
    const acquiring = app.locks.acquire('k', { waitTimeout: 0 }).catch((e: unknown) => e);
    await sleep(5);
    await app.close();
    const closedAt = Date.now();
    // Closed while Redis was still blocked (on the wall clock Redis shares with this process):
    // the 200 ms shutdownTimeout ended it, not Redis's reply.
    expect(closedAt).toBeLessThan((await ended)!);
    expect(await acquiring).toBeInstanceOf(RedisLockError);
  });

  it('ends an acquire whose attempt is in flight at shutdown, without waiting for Redis', async () => {
    const client = new Redis(redisUrl());
    try {
      const app = await createLockApp({ redis: client, shutdownTimeout: 200 });
      await app.locks.isLocked('warm-up');
      const { ended } = await blockRedis(redisUrl(), 1_500);
      let settledAt = Infinity;
      const acquiring = app.locks.acquire('k', { waitTimeout: 10_000 }).catch((e: unknown) => e).finally(() => (settledAt = Date.now()));
      await sleep(5);
      await app.close();
      expect(await acquiring).toBeInstanceOf(RedisLockError);
      // Ended while Redis was still blocked (on the wall clock Redis shares with this process):
      // by the shutdown, not by Redis's reply (an order of events, not a bound on the close).
      expect(settledAt).toBeLessThan((await ended)!);
      // The attempt ran once Redis was free, and the leave queued behind it gave the lock back.
      expect(await client.exists('lock:{k}')).toBe(0);
    } finally {
      client.disconnect();
    }
  });
});
