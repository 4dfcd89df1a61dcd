/**
 * Found by review (the case test/quorum/refused-release-round-owes-frozen-master.spec.ts left
 * open). A release round ends as soon as a majority of masters released: the others' commands
 * still run, and nobody waits for their answers. A master frozen across `app.close()` that has
 * cached no script answers that EVALSHA with NOSCRIPT once it resumes, to a client that is closed
 * by then: the EVAL it calls for was never sent, the straggler was neither missed nor owed at
 * shutdown, and the copy stayed for its lease. docs/configuration.md, "Shutdown": "After
 * `app.close()` resolves no lock this process took is left in Redis".
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLockApp } from '../support/lock-app.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

describe('quorum of 3: a release round that ended on a released majority while the third master is frozen', () => {
  const servers: RedisServer[] = [];
  beforeAll(async () => {
    for (let i = 0; i < 3; i++) servers.push(await startRedisServer());
  });
  afterAll(async () => {
    servers.forEach((server) => server.resume());
    await Promise.all(servers.map((server) => server.stop()));
  });

  it('app.close() leaves no copy on the frozen master once it resumes', { timeout: 30_000 }, async () => {
    const key = 'rv:q3:straggler';
    const admins = servers.map((server) => new Redis(server.url));
    const app = await createLockApp({ redis: servers.map((server) => server.url) as never, ttl: '30s', shutdownTimeout: '1s' });
    try {
      const lock = await app.locks.acquire(key);
      // Master 2 lost its scripts (restarted, flushed) and then froze, holding its copy.
      await admins[2]!.script('FLUSH');
      servers[2]!.pause();
      // Masters 0 and 1 released: the round ends without master 2's answer.
      await lock.release();
      expect(await admins[0]!.exists(`lock:{${key}}`)).toBe(0);
      expect(await admins[1]!.exists(`lock:{${key}}`)).toBe(0);
      await app.close();
      servers[2]!.resume();
      // Master 2 runs what was sent to it; give it 1.5 s (the copy's lease is 30 s).
      await expect.poll(() => admins[2]!.exists(`lock:{${key}}`), { timeout: 1_500, interval: 100 }).toBe(0);
    } finally {
      servers[2]!.resume();
      admins.forEach((admin) => admin.disconnect());
    }
  });
});
