import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { blockRedis } from '../support/block-redis.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';
import { createLockApp, sleep, type LockApp } from '../support/lock-app.js';

/**
 * Found by CI (the board's quorum paging spec, on a loaded machine). A master that lost its
 * scripts answers an acquisition NOSCRIPT, and the client sends it again as EVAL; once such a
 * grant lands, the other masters are asked whether the token still holds the lock, and it is
 * given back if not (test/scale/quorum-late-grant.spec.ts: a released lock must not stay there).
 * A master that did not answer that check within its 200 ms counted as "not the token's": with
 * the others busy for a moment, a live holder lost that master's copy, one failure away from
 * losing its majority. Here master 0 is slow and has no scripts, the unfenced acquisition ends
 * at the majority of masters 1 and 2, and both are busy when master 0's resent grant lands: the
 * check goes unanswered, and the copy must stay.
 */
describe('quorum: a resent grant whose ownership check goes unanswered', () => {
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

  it('keeps the live holder’s copy on the master that granted late', async () => {
    const app = await createLockApp({ redis: servers.map((server) => server.url), ttl: 30_000 });
    apps.push(app);
    // Every script cached on every node, then master 0 restarted (as far as scripts go).
    await (await app.locks.acquire('warm', { fencing: false })).release();
    await admins[0]!.script('FLUSH');

    const slow = await blockRedis(servers[0]!.url, 600);
    const lock = await app.locks.acquire('held', { fencing: false, autoRenew: false });
    // Decided by masters 1 and 2; master 0 has not even answered NOSCRIPT yet.
    const token = await admins[1]!.get('lock:{held}');
    expect(token).not.toBeNull();
    const busy = await Promise.all([1, 2].map((n) => blockRedis(servers[n]!.url, 1_500)));
    await slow.ended;
    // Master 0 answers NOSCRIPT, takes the EVAL sent again, and the check asks masters 1 and 2,
    // which answer only once their block ends, after its 200 ms.
    await Promise.all(busy.map((block) => block.ended));
    await sleep(200);
    expect(lock.held).toBe(true);
    expect(await Promise.all(admins.map((admin) => admin.get('lock:{held}')))).toEqual([token, token, token]);
    await lock.release();
  }, 20_000);
});
