import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidLockOptionsError } from '../lib/index.js';
import { createLockApp } from './support/lock-app.js';
import { redisUrl } from './support/redis.js';

/**
 * Review (drivers): the refusal of an ioredis/iovalkey client created with `stringNumbers: true`
 * loses the library's error class and, in quorum mode, names the wrong option.
 *
 * Promise: docs/configuration.md "Every option is validated when the application starts ... and
 * a bad one fails with an `InvalidLockOptionsError` naming the option and the value";
 * docs/observability.md "Bad options stop the application at startup with an
 * `InvalidLockOptionsError` naming the option"; docs/deployment.md: such a client "is refused at
 * startup". The module's other refusals of a `redis` entry (a node-redis client not connected,
 * redis-connection.ts:21; a master listed twice, lock-options.ts:163) are
 * `InvalidLockOptionsError`s naming the entry, `redis[i]` in quorum mode.
 *
 * What happens: the refusal is a plain `TypeError` thrown by the `IoRedisDriver` constructor
 * (ioredis-driver.ts:29-33) with the text `Option "redis"` hard-coded, whatever the entry: a
 * caller catching `InvalidLockOptionsError` (or reading `.option`) misses it, and in quorum mode
 * the third entry is reported as `redis`, not `redis[2]`. (The GLIDE driver's refusal of a client
 * without `config`, glide-driver.ts:94, has the same shape.)
 */
describe('a stringNumbers: true client refused at startup', () => {
  const clients: Redis[] = [];
  const open = (db: number, stringNumbers: boolean): Redis => {
    const url = new URL(redisUrl());
    url.pathname = `/${db}`;
    const client = new Redis(url.toString(), { stringNumbers, lazyConnect: true });
    client.on('error', () => undefined);
    clients.push(client);
    return client;
  };
  afterEach(() => {
    for (const client of clients.splice(0)) client.disconnect();
  });

  const refusal = async (redis: unknown): Promise<unknown> =>
    createLockApp({ redis: redis as never }).then(
      (app) => app.close().then(() => undefined),
      (error: unknown) => error,
    );

  it('is an InvalidLockOptionsError naming "redis"', async () => {
    const error = await refusal(open(1, true));
    expect(error).toBeInstanceOf(InvalidLockOptionsError);
    expect((error as InvalidLockOptionsError).option).toBe('redis');
  });

  it('names the quorum entry that was refused (redis[2])', async () => {
    const error = await refusal([open(1, false), open(2, false), open(3, true)]);
    expect(error).toBeInstanceOf(InvalidLockOptionsError);
    expect((error as InvalidLockOptionsError).option).toBe('redis[2]');
    expect(String((error as Error).message)).toContain('Option "redis[2]"');
  });
});
