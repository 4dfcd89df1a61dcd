import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { blockRedis } from '../support/block-redis.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { createLockApp, type LockApp } from '../support/lock-app.js';

/**
 * Found by CI (the board's quorum paging spec, twice, on fresh masters under load). A master that
 * lost its scripts answers an acquisition NOSCRIPT and takes it again as EVAL; such a grant was
 * given back unless another master said the token held the lock there. But on fresh masters
 * every acquisition is resent: master 0's grant landed first, and its check reached masters 1 and
 * 2 before their own resent acquisitions had run there, so both said "not the owner" and master
 * 0's copy was given back, from a lock its caller then held on two masters only (one failure from
 * losing it). Here masters 1 and 2 are busy for 100 ms while master 0 answers at once. A resent
 * grant is now given back only when this token's release (or leave) was already sent: then it is
 * surely not held; otherwise the release to come deletes it.
 */
describe('quorum: the first acquisition on three masters that have no scripts', () => {
  let servers: RedisServer[];
  const apps: LockApp[] = [];
  let admins: Redis[];
  beforeAll(async () => {
    servers = await Promise.all([0, 1, 2].map(() => startRedisServer()));
    admins = servers.map((server) => new Redis(server.url));
  });
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });
  afterAll(async () => {
    for (const admin of admins) admin.disconnect();
    await Promise.all(servers.map((server) => server.stop()));
  });

  it('leaves the lock on every master', async () => {
    const app = await createLockApp({ redis: servers.map((server) => server.url), ttl: 30_000 });
    apps.push(app);
    await Promise.all(admins.map((admin) => admin.script('FLUSH')));
    const busy = await Promise.all([1, 2].map((n) => blockRedis(servers[n]!.url, 100)));
    const lock = await app.locks.acquire('fresh', { autoRenew: false });
    await Promise.all(busy.map((block) => block.ended));
    // Every master ran its acquisition and whatever came after it (a give-back included).
    await Promise.all(admins.map((admin) => admin.ping()));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await Promise.all(admins.map((admin) => admin.exists('lock:{fresh}')))).toEqual([1, 1, 1]);
    await lock.release();
  }, 20_000);
});
