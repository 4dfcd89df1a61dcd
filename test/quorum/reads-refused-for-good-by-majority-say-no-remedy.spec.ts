import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisLockError } from '../../lib/index.js';
import { createLockApp, type LockApp } from '../support/lock-app.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

/**
 * Found by review: in quorum mode, an `isLocked()` or `inspect()` that a majority of the masters
 * refused in a way asking again cannot change (the module's Redis user may not touch the lock's
 * keys: NOPERM) said "Quorum not reached to check the lock: 1 of 3 Redis nodes answered, 2
 * needed (node 0: NOPERM ...; node 1: NOPERM ...)", the replies without what to fix, where one
 * Redis says the user may not touch the lock's keys, asking again changes nothing, and to grant
 * the ACL what docs/deployment.md lists. They now say so, as an acquisition refused so by a
 * majority does; a minority's refusal still leaves the majority's answer.
 */
describe('quorum: reads refused for good by a majority', () => {
  const servers: RedisServer[] = [];
  const admins: Redis[] = [];
  const user = `reads-${process.pid}`;
  let app: LockApp;
  beforeAll(async () => {
    servers.push(await startRedisServer(), await startRedisServer(), await startRedisServer());
    for (const server of servers) {
      const admin = new Redis(server.url);
      admins.push(admin);
      await admin.call('ACL', 'SETUSER', user, 'on', '>pw', '~*', '&*', '+@all');
    }
    const urls = servers.map((server) => {
      const url = new URL(server.url);
      url.username = user;
      url.password = 'pw';
      return url.toString();
    });
    app = await createLockApp({ redis: urls as never, shutdownTimeout: 2_000 });
    // Taken away once the module runs: the lock's keys on two masters of three.
    await admins[0]!.call('ACL', 'SETUSER', user, 'resetkeys');
    await admins[1]!.call('ACL', 'SETUSER', user, 'resetkeys');
  });
  afterAll(async () => {
    await app?.close();
    await Promise.all(admins.map((admin) => admin.quit()));
    await Promise.all(servers.map((server) => server.stop()));
  });

  it.each([
    ['isLocked', () => app.locks.isLocked('refused-read')],
    ['inspect', () => app.locks.inspect('refused-read')],
  ])('%s() names the refusal and what to fix', async (_call, read) => {
    const error = await read().then(
      (value) => value,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(RedisLockError);
    const message = (error as Error).message;
    expect(message).toMatch(/^Quorum not reached to (check|inspect) the lock: 2 of 3 Redis nodes refused it in a way asking again cannot change/);
    expect(message).toContain('NOPERM');
    expect(message).toContain('asking again changes nothing');
    expect(message).toContain('grant that user\'s ACL what docs/deployment.md lists');
    expect((error as Error).cause).toBeInstanceOf(Error);
  });
});
