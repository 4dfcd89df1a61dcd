/**
 * Found by review of 2b1bae7. docs/configuration.md, "Shutdown": "After `app.close()` resolves no
 * lock this process took is left in Redis (unless Redis did not answer within `shutdownTimeout`;
 * the lease then expires on its own)"; docs/deployment.md, quorum: "a master that missed a
 * release a majority confirmed ... is sent it again at `app.close()`". Releases go as EVAL at
 * shutdown (LockScripts.shuttingDown): a master that has not cached a script answers EVALSHA with
 * NOSCRIPT, and the EVAL that answer calls for is never sent once the connection is closed.
 *
 * 2b1bae7 also ended a release round early once a majority refused (the lock not the caller's
 * there). With 5 masters, masters 0-2 having lost the key and master 3 (which never cached the
 * release script) holding a copy while frozen, the round ended on the three refusals: master 3's
 * EVALSHA was neither `missed()` nor owed at shutdown, `app.close()` resolved at once, and on
 * resume master 3 answered NOSCRIPT to a closed client and kept the copy for its 30 s lease. A
 * round now ends early only on a released majority; on a refused one, master 3 times out, is
 * missed, and shutdown sends it again as EVAL. (A round ended early on a released majority owes its
 * stragglers too: test/quorum/released-majority-round-owes-frozen-straggler.spec.ts.)
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLockApp } from '../support/lock-app.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

describe('quorum of 5: a release round that ended early while a master holding a copy is frozen', () => {
  const servers: RedisServer[] = [];
  beforeAll(async () => {
    for (let i = 0; i < 5; i++) servers.push(await startRedisServer());
  });
  afterAll(async () => {
    servers.forEach((server) => server.resume());
    await Promise.all(servers.map((server) => server.stop()));
  });

  it('with a refused majority, app.close() leaves no copy on the frozen master once it resumes', { timeout: 30_000 }, async () => {
    const gone = [0, 1, 2];
    const key = 'rv:q5:refused';
    const admins = servers.map((server) => new Redis(server.url));
    // Master 3 has cached no script (a fresh or restarted master).
    await admins[3]!.script('FLUSH');
    const app = await createLockApp({ redis: servers.map((server) => server.url) as never, ttl: '30s', shutdownTimeout: '1s' });
    try {
      const lock = await app.locks.acquire(key);
      // The lock's copy gone from masters `gone` (restarted without persistence, say).
      for (const i of gone) await admins[i]!.del(`lock:{${key}}`);
      servers[3]!.pause();
      await lock.release().catch(() => undefined);
      await app.close();
      servers[3]!.resume();
      // Master 3 runs what was sent to it; give it 1.5 s (the copy's lease is 30 s).
      await expect.poll(() => admins[3]!.exists(`lock:{${key}}`), { timeout: 1_500, interval: 100 }).toBe(0);
    } finally {
      servers[3]!.resume();
      admins.forEach((admin) => admin.disconnect());
    }
  });
});
