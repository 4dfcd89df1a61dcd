import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FencedRedis } from '../../lib/index.js';
import { openClient, type HandedClient } from '../support/handed-clients.js';
import { startRedisServer, type RedisServer } from '../support/redis-server.js';

/**
 * Found by review (drivers' error classification). A fenced write or read for update that Redis
 * answers with an error (a key of another type: WRONGTYPE) ran to that error and changed nothing;
 * FencedRedis passes Redis' answer on as it is, and keeps "may have been applied: Redis did not
 * answer it" for a write whose answer never came (unconfirmed-write.ts). Valkey GLIDE words an
 * error code it has no name of its own for as "WRONGTYPE: Operation against ...", a colon after
 * the code, which the check for a Redis answer (the code and a space) did not take: on a GLIDE
 * client such a write was said to be unanswered and perhaps applied, and a read for update to
 * have perhaps claimed the key, as on ioredis, iovalkey and node-redis it is not.
 */
describe('FencedRedis through a GLIDE client, on a key of another type', () => {
  let server: RedisServer;
  let handed: HandedClient;
  beforeAll(async () => {
    server = await startRedisServer();
    handed = await openClient('GLIDE', server.url);
  });
  afterAll(async () => {
    handed?.close();
    await server?.stop();
  });

  it('passes Redis WRONGTYPE answer on, not "may have been applied"', async () => {
    const fenced = new FencedRedis(handed.client as never);
    await fenced.set('glide:string', 'v', 1);
    await fenced.hset('glide:hash', 'f', 'v', 1);
    for (const call of [() => fenced.hset('glide:string', 'f', 'v', 2), () => fenced.get('glide:hash', 5), () => fenced.hget('glide:string', 'f', 5)]) {
      const refused = await call().then(
        () => undefined,
        (error: Error) => error.message,
      );
      expect(refused).toMatch(/WRONGTYPE/);
      // Failed: "FencedRedis.hset(): the write to "glide:string" may have been applied: Redis did not answer it (WRONGTYPE: ...)".
      expect(refused).not.toMatch(/may have been applied|did not answer/);
    }
    expect([await fenced.fence('glide:hash'), await fenced.fence('glide:string')]).toEqual([1, 1]);
  });
});
