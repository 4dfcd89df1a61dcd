import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { LockNotAcquiredError } from '../../lib/index.js';
import { createLockApp, sleep } from '../support/lock-app.js';
import { useOwnRedis } from '../support/redis.js';

/**
 * Suspected by review (quorum mode), shown on one Redis as well. An acquisition that
 * `app.close()` ends is given back at once, and again once its attempt has settled
 * (LockManager.leave: a NOSCRIPT retry could run the attempt behind the first give-back). An
 * attempt a frozen Redis left unanswered settles only when Redis resumes, after the close: the
 * second give-back then went out on the client the application handed in and keeps open, from an
 * application closed already (docs/deployment.md: nothing is sent after app.close() on clients
 * handed in).
 *
 * With the scripts flushed before the freeze, the attempt itself is answered NOSCRIPT once Redis
 * resumes: it was sent again as EVAL after the close as well (found by review, forty-third
 * session; see release-noscript-answered-after-close-resent-on-handed-client.spec.ts).
 */
describe('a waiting acquisition ended by app.close() while Redis is frozen, with a client handed in', () => {
  const own = useOwnRedis();

  it.each([
    ['its scripts cached', false],
    ['its scripts flushed: the attempt is answered NOSCRIPT', true],
  ])('sends nothing on that client once Redis resumes (%s)', { timeout: 30_000 }, async (_how, flushed) => {
    const holder = await createLockApp({ redis: own.url(), ttl: 10_000 });
    const client = new Redis(own.url());
    client.on('error', () => undefined);
    const app = await createLockApp({ redis: client, ttl: 3_000, shutdownTimeout: '100ms' });
    const sent: string[] = [];
    try {
      const held = await holder.locks.acquire('give-back');
      const waiting = app.locks.acquire('give-back', { waitTimeout: 20_000 }).catch((error: unknown) => error);
      await sleep(300);
      if (flushed) await own.redis().script('FLUSH');
      own.server().pause();
      // The waiter's next poll is written to the frozen server.
      await sleep(1_500);
      await app.close();
      expect(await waiting).toBeInstanceOf(LockNotAcquiredError);
      const send = client.sendCommand.bind(client);
      client.sendCommand = ((command: { name: string }) => (sent.push(command.name), send(command as never))) as Redis['sendCommand'];
      own.server().resume();
      // Redis answers what was written to it before the close (the attempt, the first give-back).
      await client.ping();
      await sleep(500);
      await held.release();
      // Before: ['eval'], the second give-back, sent after the close (and the attempt as EVAL, flushed).
      expect(sent.filter((command) => command !== 'ping')).toEqual([]);
    } finally {
      own.server().resume();
      await holder.close();
      client.disconnect();
    }
  });
});
