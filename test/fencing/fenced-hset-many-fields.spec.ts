// docs/fencing.md, "Redis: FencedRedis": "An `hset()` may carry any number of fields (the script
// writes them 1,000 at a time, after the one check)." docs/testing.md: the in-memory store of
// nestjs-redis-lock/testing (its FencedRedis included) has the same semantics as Redis.
//
// Found by review. On an ioredis client (the module's default) IoRedisDriver.evalScript spread
// every argument of the script call into one JavaScript call, `client.evalsha(sha, n, ...keys, ...args)`. Past about 120,000
// arguments (60,000-odd fields) V8's stack could not hold them, and `hset()` rejected with
// `RangeError: Maximum call stack size exceeded`: not a refusal naming FencedRedis.hset() or its
// argument, nor the write the docs promise. The same write through the testing module's
// FencedRedis succeeded, so a unit test of the code passed and production failed.
import 'reflect-metadata';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { describe, expect, it } from 'vitest';
import { FencedRedis } from '../../lib/index.js';
import { InMemoryLocks } from '../../lib/testing/index.js';
import { HANDED_CLIENTS, openClient, type HandedClientName } from '../support/handed-clients.js';
import { redisUrl, useRedis } from '../support/redis.js';

const FIELDS = 100_000;

function manyFields(): Record<string, number> {
  const fields: Record<string, number> = {};
  for (let i = 0; i < FIELDS; i++) fields[`f${i}`] = i;
  return fields;
}

describe('FencedRedis.hset() with many fields', () => {
  const redis = useRedis();

  it('writes them in memory (nestjs-redis-lock/testing)', async () => {
    const fenced = new FencedRedis(new InMemoryLocks());
    await fenced.hset('catalog:{s15c}', manyFields(), 1);
    expect(await fenced.hget('catalog:{s15c}', `f${FIELDS - 1}`)).toBe(String(FIELDS - 1));
  });

  it('writes them on Redis through ioredis, as docs/fencing.md promises ("any number of fields")', { timeout: 60_000 }, async () => {
    const client = new Redis(redisUrl());
    try {
      const fenced = new FencedRedis(client);
      let failure: unknown;
      await fenced.hset('catalog:{s15c}', manyFields(), 1).catch((error: unknown) => (failure = error));
      expect(failure === undefined ? 'written' : `${(failure as Error).name}: ${(failure as Error).message}`).toBe('written');
      expect(await redis.hlen('catalog:{s15c}')).toBe(FIELDS);
      expect(await fenced.fence('catalog:{s15c}')).toBe(1);
    } finally {
      client.disconnect();
    }
  });

  // node-redis' driver spread them the same way, into `command.push(...)`.
  it('writes them on Redis through node-redis too', { timeout: 60_000 }, async () => {
    const client = await createClient({ url: redisUrl() }).connect();
    try {
      const fenced = new FencedRedis(client);
      let failure: unknown;
      await fenced.hset('catalog:{s15c-nr}', manyFields(), 1).catch((error: unknown) => (failure = error));
      expect(failure === undefined ? 'written' : `${(failure as Error).name}: ${(failure as Error).message}`).toBe('written');
      expect(await redis.hlen('catalog:{s15c-nr}')).toBe(FIELDS);
    } finally {
      await client.close();
    }
  });

  for (const name of Object.keys(HANDED_CLIENTS) as HandedClientName[]) {
    it(`writes them on Redis through ${name} too`, { timeout: 60_000 }, async () => {
      const handed = await openClient(name, redisUrl());
      try {
        const fenced = new FencedRedis(handed.client as never);
        const key = `catalog:{s15c-${name.replace(/\W/g, '')}}`;
        let failure: unknown;
        await fenced.hset(key, manyFields(), 1).catch((error: unknown) => (failure = error));
        expect(failure === undefined ? 'written' : `${(failure as Error).name}: ${(failure as Error).message}`).toBe('written');
        expect(await redis.hlen(key)).toBe(FIELDS);
      } finally {
        handed.close();
      }
    });
  }
});
