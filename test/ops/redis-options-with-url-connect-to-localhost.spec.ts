import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError, LockService, RedisLockModule } from '../../lib/index.js';
import { LOCK_RUNNER } from '../../lib/redis-lock.constants.js';
import type { LockManager } from '../../lib/core/engine/lock-manager.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl } from '../support/redis.js';

/**
 * `redis: { url: process.env.REDIS_URL }` is how node-redis (`createClient({ url })`) and many
 * configuration modules spell a connection; docs/configuration.md takes "a `redis://`/`rediss://`
 * URL, ioredis options [...]" and says a bad option "fails with an `InvalidLockOptionsError` naming
 * the option and the value". `checkRedis()` (lib/core/options/lock-options.ts) accepts any plain
 * object, and `openConnection()` (lib/core/stores/redis/redis-connection.ts) hands it to
 * `new Redis(options)`, for which `url` means nothing: the module connects to localhost:6379, a
 * development Redis or none at all, instead of the server named. The library already refuses an
 * object that looks like another client for exactly this reason ("taken for ioredis options, it
 * would connect to localhost instead"), but not node-redis' own options shape.
 */
describe('redis given as { url } (node-redis options shape)', () => {
  it('is refused with InvalidLockOptionsError naming "redis", not connected to localhost:6379', async () => {
    const url = redisUrl();
    expect(new URL(url).port).not.toBe('6379');
    const logs = new CapturedLogs();
    let error: unknown;
    let moduleRef: Awaited<ReturnType<ReturnType<typeof Test.createTestingModule>['compile']>> | undefined;
    try {
      moduleRef = await Test.createTestingModule({ imports: [RedisLockModule.forRoot({ redis: { url } as never, waitTimeout: 0 })] })
        .setLogger(logs)
        .compile();
      await moduleRef.init();
    } catch (thrown) {
      error = thrown;
    }
    try {
      if (moduleRef !== undefined && error === undefined) {
        // What it connects to instead: ioredis' defaults, not the URL given.
        const client = (moduleRef.get(LockService)[LOCK_RUNNER] as LockManager).clients[0] as unknown as { options: { host: string; port: number } };
        expect({ host: client.options.host, port: client.options.port }).toEqual({ host: 'localhost', port: 6379 });
      }
      expect(error).toBeInstanceOf(InvalidLockOptionsError);
      expect((error as InvalidLockOptionsError).option).toBe('redis');
    } finally {
      await moduleRef?.close();
    }
  });
});
