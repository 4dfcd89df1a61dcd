import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError, LockService } from '../../lib/index.js';
import { InMemoryLocks, RedisLockTestingModule } from '../../lib/testing/index.js';

/**
 * Found while checking a review suspicion (forty-fourth session). `RedisLockTestingModule.forRoot()`
 * given a config class's instance whose options are getters (`get ttl()`, `get locks()`): Nest's
 * module builder copies the options' own names only, so the getters were dropped without a word,
 * the module locking on its defaults in `InMemoryLocks.shared` rather than in the store the config
 * gave. `RedisLockModule.forRoot()` reads them by name since 78dd39f; the testing module now does too.
 */
describe('RedisLockTestingModule.forRoot() given a config class instance whose options are getters', () => {
  it('locks in the store and on the ttl its getters give, not the defaults', async () => {
    const store = new InMemoryLocks();
    class LockSettings {
      get locks(): InMemoryLocks {
        return store;
      }
      get ttl(): number {
        return 600_000;
      }
    }
    const moduleRef = await Test.createTestingModule({ imports: [RedisLockTestingModule.forRoot(new LockSettings())] }).compile();
    await moduleRef.init();
    try {
      const locks = moduleRef.get(LockService);
      const lock = await locks.acquire('settings');
      // Held in the config's store, so that another module on InMemoryLocks.shared does not see it.
      const other = await Test.createTestingModule({ imports: [RedisLockTestingModule.forRoot()] }).compile();
      await other.init();
      try {
        expect((await other.get(LockService).inspect('settings')).held).toBe(false);
      } finally {
        await other.close();
      }
      expect((await locks.inspect('settings')).ttlMs).toBeGreaterThan(300_000);
      await lock.release();
    } finally {
      await moduleRef.close();
    }
  });

  it('refuses a get redis() as it refuses redis in an object literal: the locks are kept in memory', () => {
    class LockSettings {
      get redis(): string {
        return 'redis://localhost:6379';
      }
    }
    expect(() => RedisLockTestingModule.forRoot(new LockSettings() as never)).toThrow(/^RedisLockTestingModule\.forRoot\(\): Option "redis" must be left out here/);
  });

  it('refuses one whose getter throws, naming forRoot() and the option, the error thrown as its cause', () => {
    const unloaded = new Error('config not loaded: ttl');
    class LockSettings {
      get ttl(): number {
        throw unloaded;
      }
    }
    let error: unknown;
    try {
      RedisLockTestingModule.forRoot(new LockSettings());
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(InvalidLockOptionsError);
    expect((error as Error).message).toMatch(/^RedisLockTestingModule\.forRoot\(\): Option "ttl" must be readable: reading it threw "config not loaded: ttl"/);
    expect((error as Error).cause).toBe(unloaded);
  });
});
