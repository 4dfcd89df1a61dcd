import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '../../lib/core/stores/redis/lock-lua.js';
import { blockRedis } from '../support/block-redis.js';
import { useQuorumServers } from '../support/quorum-nodes.js';
import { createLockApp, type LockApp } from '../support/lock-app.js';

/**
 * Found by review. A master that restarted (its script cache empty) and is slow answers an
 * acquisition the round did not wait for (a majority decided) after the release went out behind
 * it: its EVALSHA answers NOSCRIPT, the release runs (nothing to delete), and only then does the
 * acquisition come again as EVAL, whose SET lands and was never given back: the released lock
 * stayed on that node for its whole ttl (with one more node down, nobody could take it). Such a
 * resent grant is now given back once it lands, if the token holds the lock on no other node.
 */
describe('quorum: a grant that lands on a slow node after the release', () => {
  const servers = useQuorumServers();
  const apps: LockApp[] = [];
  let admins: Redis[];
  beforeAll(async () => {
    admins = servers.map((server) => new Redis(server.url));
  });
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });
  afterAll(async () => {
    for (const admin of admins) admin.disconnect();
  });

  it.each([
    ['without fencing (the round ends at a majority)', { fencing: false }],
    ['with fencing (the slow node times out)', {}],
  ])('is given back once it lands, %s', async (_what, options) => {
    const app = await createLockApp({ redis: servers.map((server) => server.url), ttl: 30_000 });
    apps.push(app);
    // Every script cached on every node.
    await (await app.locks.acquire('warm', options)).release();
    // Node 2 restarted: no acquire script, but the release script is back (another key's release got there first).
    await admins[2]!.script('FLUSH');
    await admins[2]!.script('LOAD', COMMANDS.quorumRelease.lua);
    const block = await blockRedis(servers[2]!.url, 1_500);
    const lock = await app.locks.acquire('late', { ...options, waitTimeout: 5_000 });
    await lock.release();
    await block.ended;
    // Node 2 has run the acquisition (its resent EVAL) and whatever came after it.
    await expect.poll(() => admins[2]!.script('EXISTS', shaOf(COMMANDS.quorumAcquire.lua)), { timeout: 5_000 }).toEqual([1]);
    await expect.poll(() => admins[2]!.exists('lock:{late}'), { timeout: 5_000 }).toBe(0);
    for (const admin of admins) expect(await admin.exists('lock:{late}')).toBe(0);
  });
});

function shaOf(lua: string): string {
  return createHash('sha1').update(lua).digest('hex');
}
