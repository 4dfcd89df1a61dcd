import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError, LockService, RedisLockModule } from '../../lib/index.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl, useRedis } from '../support/redis.js';

/**
 * Found while checking review suspicions (forty-fourth session). `RedisLockModule.forRoot()`
 * given a config class's instance whose options are getters (`get ttl()`): Nest's module builder
 * copies the options' own names only, so the getters were dropped without a word, the module
 * running on its defaults (a `get redis()` was refused as missing). A `forRootAsync()` factory's
 * result, read by name, kept them (and a getter that throws was never read). `forRoot()` now reads
 * them by name too, and refuses one whose getter throws as a lock call does.
 */
describe('RedisLockModule.forRoot() given a config class instance whose options are getters', () => {
  const redis = useRedis();

  it('runs on the values its getters give, not the defaults', async () => {
    class LockSettings {
      get redis(): string {
        return redisUrl();
      }
      get ttl(): number {
        return 60_000;
      }
    }
    const moduleRef = await Test.createTestingModule({ imports: [RedisLockModule.forRoot(new LockSettings())] })
      .setLogger(new CapturedLogs())
      .compile();
    await moduleRef.init();
    try {
      const lock = await moduleRef.get(LockService).acquire('settings');
      expect(await redis.pttl('lock:{settings}')).toBeGreaterThan(30_000);
      await lock.release();
    } finally {
      await moduleRef.close();
    }
  });

  it('refuses one whose getter throws, naming forRoot() and the option, the error thrown as its cause', () => {
    const unloaded = new Error('config not loaded: ttl');
    class LockSettings {
      redis = redisUrl();
      get ttl(): number {
        throw unloaded;
      }
    }
    let error: unknown;
    try {
      RedisLockModule.forRoot(new LockSettings());
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(InvalidLockOptionsError);
    expect((error as Error).message).toMatch(/^RedisLockModule\.forRoot\(\): Option "ttl" must be readable: reading it threw "config not loaded: ttl"/);
    expect((error as Error).cause).toBe(unloaded);
  });
});
