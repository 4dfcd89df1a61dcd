import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError, LockService, RedisLockModule } from '../../lib/index.js';
import { LOCK_RUNNER } from '../../lib/redis-lock.constants.js';
import type { LockManager } from '../../lib/core/engine/lock-manager.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl } from '../support/redis.js';

/**
 * Found by review of 0dc591a ("redis: { url } [...] refused at startup": ioredis has no `url`
 * option and would connect to localhost:6379). checkRedis() (lib/core/options/lock-options.ts)
 * refuses `url` only on an object whose prototype is Object.prototype. The same options shape
 * built otherwise reaches ioredis all the same and connects to localhost:6379: a validated config
 * class instance (the NestJS pattern `plainToInstance(RedisConfig, env)` with class-transformer,
 * or any `new RedisConfig()`), and a null-prototype object (what `querystring.parse`, `Object.create(null)`
 * based config loaders and `structuredClone` of such objects give).
 */
describe('redis given as { url } built as a class instance or a null-prototype object', () => {
  class RedisConfig {
    url!: string;
  }

  const shapes: [string, () => object][] = [
    ['a config class instance', () => Object.assign(new RedisConfig(), { url: redisUrl() })],
    ['a null-prototype object', () => Object.assign(Object.create(null) as object, { url: redisUrl() })],
  ];

  for (const [name, make] of shapes) {
    it(`${name} is refused with InvalidLockOptionsError naming "redis", not connected to localhost:6379`, async () => {
      expect(new URL(redisUrl()).port).not.toBe('6379');
      const logs = new CapturedLogs();
      let error: unknown;
      let moduleRef: Awaited<ReturnType<ReturnType<typeof Test.createTestingModule>['compile']>> | undefined;
      try {
        moduleRef = await Test.createTestingModule({ imports: [RedisLockModule.forRoot({ redis: make() as never, waitTimeout: 0 })] })
          .setLogger(logs)
          .compile();
        await moduleRef.init();
      } catch (thrown) {
        error = thrown;
      }
      try {
        let connectedTo: unknown;
        if (moduleRef !== undefined && error === undefined) {
          const client = (moduleRef.get(LockService)[LOCK_RUNNER] as LockManager).clients[0] as unknown as { options: { host: string; port: number } };
          connectedTo = { host: client.options.host, port: client.options.port };
        }
        // Before: started, connected to { host: 'localhost', port: 6379 }.
        expect({ refused: error instanceof InvalidLockOptionsError ? (error as InvalidLockOptionsError).option : error, connectedTo }).toEqual({ refused: 'redis', connectedTo: undefined });
      } finally {
        await moduleRef?.close();
      }
    });
  }
});
