import { Test } from '@nestjs/testing';
import { describe, expect, it } from 'vitest';
import { InvalidLockOptionsError, LockService, RedisLockModule } from '../../lib/index.js';
import { LOCK_RUNNER } from '../../lib/redis-lock.constants.js';
import type { LockManager } from '../../lib/core/engine/lock-manager.js';
import { CapturedLogs } from '../support/lock-app.js';
import { redisUrl } from '../support/redis.js';

/**
 * Found by review (forty-first session). docs/configuration.md: `redis` is "a redis:// or
 * rediss:// URL, ioredis options, an ioredis or iovalkey Redis or Cluster client, a node-redis
 * client ... or a Valkey GLIDE client", and what is none of them is refused at startup naming
 * `redis` (`{ url }` is, since ioredis would connect to localhost:6379). Two shapes that are none
 * of them passed as ioredis options all the same, and the module connected to localhost:6379 (a
 * developer's own Redis, or nothing: every call then failed "Redis did not answer"):
 * - a Promise of a connection: node-redis' `client.connect()` or an async factory's result not
 *   awaited (`redis: createClient({ url }).connect()`);
 * - a WHATWG `URL` object (`redis: new URL(process.env.REDIS_URL)`), whose fields are getters
 *   ioredis never reads.
 */
describe('redis given as a Promise of a connection or a URL object', () => {
  const shapes: [string, () => object][] = [
    ['a Promise of a connection (node-redis connect() not awaited)', () => Promise.resolve(redisUrl())],
    ['a URL object', () => new URL(redisUrl())],
  ];

  it.each(shapes)('%s is refused with InvalidLockOptionsError naming "redis", not connected to localhost:6379', async (_name, make) => {
    expect(new URL(redisUrl()).port).not.toBe('6379');
    const outcome = await Promise.resolve()
      .then(() => Test.createTestingModule({ imports: [RedisLockModule.forRoot({ redis: make() as never, waitTimeout: 0 })] }).setLogger(new CapturedLogs()).compile())
      .then(
        async (moduleRef) => {
          // Started: where its client went.
          const client = (moduleRef.get(LockService)[LOCK_RUNNER] as LockManager).clients[0] as unknown as { options: { host: string; port: number } };
          const connectedTo = { host: client.options.host, port: client.options.port };
          await moduleRef.close();
          return { connectedTo };
        },
        (error: unknown) => ({ refused: error instanceof InvalidLockOptionsError ? [error.option, error.message] : error }),
      );
    // Before: { connectedTo: { host: 'localhost', port: 6379 } } for the Promise, a bare TypeError for the URL object.
    expect(outcome).toEqual({ refused: ['redis', expect.stringMatching(/^RedisLockModule\.forRoot\(\): Option "redis" must be /)] });
  });
});
