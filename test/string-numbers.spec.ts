import { Cluster, Redis } from 'ioredis';
import { Redis as Valkey } from 'iovalkey';
import { describe, expect, it } from 'vitest';
import { driverFor } from '../lib/core/stores/redis/drivers/driver-for.js';
import type { RedisClient } from '../lib/core/stores/redis/drivers/redis-client.js';
import { useLockApps } from './support/lock-app.js';
import { useOwnRedis } from './support/redis.js';

/**
 * Found by review: an ioredis or iovalkey client created with `stringNumbers: true` answers every
 * integer reply as a string, and the scripts answer integers (fencing tokens, reply codes): a
 * tryAcquire() that took the lock in Redis answered null, and every acquire, release and renewal
 * was misread. A script's string reply cannot be told from an integer's once ioredis read it, so
 * such a client is refused at startup, naming the option.
 */
describe.each([
  ['ioredis', (url: string) => new Redis(url, { stringNumbers: true, lazyConnect: true })],
  ['iovalkey', (url: string) => new Valkey(url, { stringNumbers: true, lazyConnect: true }) as unknown as Redis],
] as const)('a %s client with stringNumbers: true', (_name, open) => {
  const own = useOwnRedis();
  const app = useLockApps();

  it('is refused when the module starts, naming the option, and nothing is left in Redis', async () => {
    const client = open(own.url());
    try {
      await expect(app({ redis: client })).rejects.toThrow(/Option "redis".*stringNumbers: true/);
      expect(await own.redis().dbsize()).toBe(0);
    } finally {
      client.disconnect();
    }
  });

  it('works once duplicated without it', async () => {
    const client = open(own.url());
    const plain = client.duplicate({ stringNumbers: false });
    try {
      const { locks } = await app({ redis: plain });
      const lock = await locks.tryAcquire('free');
      expect(lock?.fencingToken).toBe(Number(await own.redis().get('lock:{free}:fence')));
      await lock!.release();
      expect(await own.redis().exists('lock:{free}')).toBe(0);
    } finally {
      client.disconnect();
      plain.disconnect();
    }
  });
});

it('refuses a Cluster client whose nodes answer integers as strings', () => {
  const cluster = new Cluster([{ host: '127.0.0.1', port: 1 }], { lazyConnect: true, redisOptions: { stringNumbers: true } });
  try {
    expect(() => driverFor(cluster as unknown as RedisClient)).toThrow(/redisOptions: \{ stringNumbers: false \}/);
  } finally {
    cluster.disconnect();
  }
});
