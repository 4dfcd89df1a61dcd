import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RedisLockError } from '../../lib/index.js';
import { createLockApp, type LockApp } from '../support/lock-app.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

/**
 * Found by review of a56267c. On one Redis, an extend() Redis refused for good (an ACL user
 * without EVALSHA) says the lock could not be extended, that Redis refused it, why, what to fix,
 * and that the lock is still held until its lease deadline. In quorum mode, with a majority of the
 * masters refusing so, it said "Redis did not confirm it (not enough nodes answered ...)", though
 * they had answered, with a refusal that asking again cannot change. It now says as one Redis'
 * does, the quorum's refusal in its message, the client's error its cause.
 */
describe('quorum: an extend() refused for good by a majority of the masters', () => {
  const servers: RedisServer[] = [];
  const admins: Redis[] = [];
  const user = `extender-${process.pid}`;
  beforeAll(async () => {
    servers.push(...(await Promise.all([0, 1, 2].map(() => startRedisServer()))));
    admins.push(...servers.map((server) => new Redis(server.url)));
  });
  afterAll(async () => {
    await Promise.all(admins.map((admin) => admin.quit()));
    await Promise.all(servers.map((server) => server.stop()));
  });

  let app: LockApp | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
    await Promise.all(admins.map((admin) => admin.call('ACL', 'DELUSER', user)));
    await Promise.all(admins.map((admin) => admin.flushall()));
  });

  it('says the masters refused it, why and what to fix, and that the lock is still held', { timeout: 30_000 }, async () => {
    await Promise.all(admins.map((admin) => admin.call('ACL', 'SETUSER', user, 'reset', 'on', '>pw', '~*', '&*', '+@all')));
    const urls = servers.map((server) => {
      const url = new URL(server.url);
      url.username = user;
      url.password = 'pw';
      return url.toString();
    });
    app = await createLockApp({ redis: urls as never, shutdownTimeout: 1_000 });
    const key = 'q-extend-refused';
    const lock = await app.locks.acquire(key, { ttl: 30_000, autoRenew: false });
    await Promise.all([0, 1].map((i) => admins[i]!.call('ACL', 'SETUSER', user, '-evalsha', '-eval')));
    const error = await lock.extend('40s').then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(RedisLockError);
    const message = (error as Error).message;
    // On main: "Lock "q-extend-refused" could not be extended: Redis did not confirm it (not enough nodes answered, ...)".
    expect(message).not.toMatch(/answered/);
    expect(message).toMatch(/^Lock "q-extend-refused" could not be extended: [\s\S]*2 of 3 Redis nodes refused it[\s\S]*NOPERM[\s\S]*ACL[\s\S]*it is still held until its lease deadline\.$/);
    expect(((error as Error).cause as Error).message).toMatch(/NOPERM/);
    expect(lock.signal.aborted).toBe(false);
  });
});
