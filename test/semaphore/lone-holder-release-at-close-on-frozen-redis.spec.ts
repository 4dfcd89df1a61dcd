import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { closesWithin, useFrozenRedis } from '../support/frozen-redis.js';
import { createLockApp, sleep } from '../support/lock-app.js';

/**
 * Suspected by review (semaphores under a frozen Redis): a semaphore's holder alone (one
 * `!<token>` field, see LONE in semaphore-lua.ts) is released by a plain `HDEL`, and by the
 * release script when that answers 0. Still held at `app.close()` on a frozen Redis, its `HDEL`
 * is written to the frozen server; the close must end within `shutdownTimeout`, and when Redis
 * resumes after the lease ran out (the `HDEL` then answers 0) the fallback script must not go
 * out on the client the application handed in and keeps open (docs/deployment.md: nothing is
 * sent after `app.close()` on clients handed in). Nothing may be left beyond the lease.
 */
describe('a semaphore holder alone still held at app.close() on a frozen Redis', () => {
  const own = useFrozenRedis();

  it('ends the close within shutdownTimeout, sends nothing after it on a handed client, and leaves nothing past the lease', { timeout: 30_000 }, async () => {
    const client = new Redis(own.url());
    client.on('error', () => undefined);
    const sent: string[] = [];
    try {
      const app = own.opened(await createLockApp({ redis: client, ttl: 1_500, shutdownTimeout: '200ms' }));
      const key = 'lone-frozen';
      await app.locks.acquire(key, { limit: 2 });
      // The lone form: its field is its permit, there is no permit key.
      expect(await own.redis().hkeys(`lock:{${key}}:holders`)).toEqual([expect.stringMatching(/^!/)]);
      own.server().pause();
      await closesWithin(app, 10_000);
      const send = client.sendCommand.bind(client);
      client.sendCommand = ((command: { name: string }) => (sent.push(command.name), send(command as never))) as Redis['sendCommand'];
      // The lease runs out while Redis is frozen (its clock goes on): the HDEL written before the
      // close finds the field gone.
      await sleep(2_500);
      own.server().resume();
      // Redis answers what was written to it before the close.
      await client.ping();
      await sleep(500);
      expect(sent.filter((command) => command !== 'ping')).toEqual([]);
      expect((await own.redis().keys('*')).sort()).toEqual([`lock:{${key}}:fence`]);
    } finally {
      own.server().resume();
      client.disconnect();
    }
  });
});
