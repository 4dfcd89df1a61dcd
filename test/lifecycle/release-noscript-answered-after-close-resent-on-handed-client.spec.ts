/**
 * Suspected by review (forty-third session). A release sent before `app.close()` goes as EVALSHA;
 * a server that lost its scripts (a restart, `SCRIPT FLUSH`) answers NOSCRIPT, and the driver
 * sends the script again as EVAL. A server frozen while that release was on its way answers only
 * once it resumes, after the close: the EVAL then went out on the client the application handed in
 * and keeps open, from an application closed already (nothing is sent on a client handed in after
 * `app.close()`, docs/configuration.md). The lock ends with its lease instead.
 *
 * A semaphore's and a read lock's release take the driver's guarded fallback instead of the
 * store's: covered on each driver (the forty-third session; each failed with ['eval'] with the
 * driver's guard taken out).
 */
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import type { LockOptions } from '../../lib/index.js';
import { createLockApp, sleep } from '../support/lock-app.js';
import { RECORDED_CLIENTS as clients, recordedGlide as glide, sentAfterClose } from '../support/recorded-clients.js';
import { useOwnRedis } from '../support/redis.js';

/**
 * What is released: a mutex's release goes through the store's own fallback; a semaphore's and a
 * read lock's through the driver's (`RedisDriver.evalScript`), GLIDE's too. A semaphore's holder
 * alone is released by HDEL, no script: another holds a permit beside it (on a connection of its
 * own). `held`: whether what the release was for is still in Redis, left to its lease.
 */
interface Kind {
  options: LockOptions;
  beside?: boolean;
  held(redis: Redis): Promise<boolean>;
}

const kinds: [string, Kind][] = [
  ['a release', { options: {}, held: async (redis) => (await redis.pttl('lock:{noscript}')) > 0 }],
  ['a semaphore release', { options: { limit: 3 }, beside: true, held: async (redis) => (await redis.hget('lock:{noscript}:holders', ':used')) === '2' }],
  ['a read lock release', { options: { mode: 'read' }, held: async (redis) => (await redis.pttl('lock:{noscript}:readers')) > 0 }],
];

const releases = [
  ...kinds.flatMap(([kind, what]) => clients.map(([client, open]) => [kind, client, open, what] as const)),
  ['a semaphore release', 'Valkey GLIDE', glide, kinds[1]![1]] as const,
];

describe('a release that a frozen Redis answers NOSCRIPT after app.close(), on a client handed in', () => {
  const own = useOwnRedis();

  it.each(releases)('%s is not sent again as EVAL once the application has closed (%s)', { timeout: 30_000 }, async (_kind, _name, open, kind) => {
    const handed = await open(own.url());
    const beside = kind.beside === true ? await createLockApp({ redis: own.url(), ttl: 10_000 }) : undefined;
    const app = await createLockApp({ redis: handed.client, ttl: 10_000, shutdownTimeout: '100ms' });
    try {
      await beside?.locks.acquire('noscript', kind.options);
      // Released once: GLIDE loads a script at its first call, ahead of it on the connection.
      await (await app.locks.acquire('noscript', kind.options)).release();
      const lock = await app.locks.acquire('noscript', kind.options);
      const { settled, sent } = await sentAfterClose(handed, own, () => lock.release(), () => app.close());
      expect(settled).toBeInstanceOf(Error);
      // Before: ['eval'], the release sent again after the close.
      expect(sent).toEqual([]);
      // The lock ends with its lease.
      expect(await kind.held(own.redis())).toBe(true);
    } finally {
      own.server().resume();
      await beside?.close();
    }
  });

  it.each(clients)('nor is a renewal (%s)', { timeout: 30_000 }, async (_name, open) => {
    const handed = await open(own.url());
    // Renewed every 300 ms.
    const app = await createLockApp({ redis: handed.client, ttl: 900, shutdownTimeout: '100ms' });
    const sent: string[] = [];
    try {
      await app.locks.acquire('noscript-renewed');
      // Renewed once: ioredis sends a script's first call on a connection as EVAL, its next ones as EVALSHA.
      await sleep(450);
      await own.redis().script('FLUSH');
      own.server().pause();
      // A renewal is written to the frozen server, as EVALSHA.
      await sleep(700);
      await app.close();
      handed.record(sent);
      own.server().resume();
      await handed.ping();
      await sleep(500);
      // Before: ['eval'], the renewal sent again after the close.
      expect(sent.filter((command) => command !== 'ping')).toEqual([]);
    } finally {
      own.server().resume();
    }
  });
});
